import type { Store } from "../ports/store.js";
import type { StoredCountsResult } from "../../domain/records.js";
import { fail } from "../../domain/errors.js";

export type ResultKind = StoredCountsResult["kind"];

/** Where the caller stands in a paged result; null when the answer is complete. */
export interface PageInfo {
  requestId: string;
  /** The page to fetch next. */
  nextPage: number;
  pageSize: number;
  totalRows: number;
  totalPages: number;
}

export interface ResultPage {
  requestId: string;
  columns: string[];
  extra: Record<string, unknown>;
  data: unknown[][];
  next: PageInfo | null;
}

export interface ResultOptions {
  orgId: string;
  kind: ResultKind;
  columns: string[];
  extra?: Record<string, unknown>;
  rows: unknown[][];
  pageSize: number;
  ttlMs: number;
  now: Date;
}

const nextOf = (r: Pick<StoredCountsResult, "requestId" | "pageSize" | "totalRows">, page: number) => {
  const totalPages = Math.max(1, Math.ceil(r.totalRows / r.pageSize));
  return page >= totalPages
    ? null
    : {
        requestId: r.requestId,
        nextPage: page + 1,
        pageSize: r.pageSize,
        totalRows: r.totalRows,
        totalPages,
      };
};

/**
 * First page of a fresh result. A result longer than one page is stored,
 * split into pages, so later pages are served from the same rows.
 */
export async function firstPage(store: Pick<Store, "countsResults">, o: ResultOptions): Promise<ResultPage> {
  const requestId = crypto.randomUUID();
  const extra = o.extra ?? {};
  const meta = { requestId, pageSize: o.pageSize, totalRows: o.rows.length };
  if (o.rows.length > o.pageSize) {
    const pages: unknown[][][] = [];
    for (let i = 0; i < o.rows.length; i += o.pageSize) pages.push(o.rows.slice(i, i + o.pageSize));
    const stored: StoredCountsResult = {
      ...meta,
      orgId: o.orgId,
      kind: o.kind,
      columns: o.columns,
      extra,
      createdAt: o.now.toISOString(),
      expiresAt: new Date(o.now.getTime() + o.ttlMs).toISOString(),
    };
    await store.countsResults.save(stored, pages, o.now.toISOString());
  }
  return { requestId, columns: o.columns, extra, data: o.rows.slice(0, o.pageSize), next: nextOf(meta, 1) };
}

/** A page of a stored result of the caller's organization; 404 when unknown or expired. */
export async function laterPage(
  store: Store,
  orgId: string,
  kind: ResultKind,
  requestId: string,
  page: number,
  now: Date,
) {
  const result = await store.countsResults.get(orgId, kind, requestId, now.toISOString());
  if (!result) throw fail("unknown_request_id", { kind, request_id: requestId }, "request_id");
  const rows = await store.countsResults.page(requestId, page);
  if (!rows) {
    const totalPages = Math.ceil(result.totalRows / result.pageSize);
    throw fail("invalid_page", { pages: totalPages }, "page");
  }
  const answer: ResultPage = {
    requestId,
    columns: result.columns,
    extra: result.extra,
    data: rows,
    next: nextOf(result, page),
  };
  return answer;
}
