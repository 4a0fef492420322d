import type { Store } from "../ports/store.js";
import type { StoredCountsResult } from "../../domain/records.js";
import { fail } from "../../domain/errors.js";
import { tableJson, type MetricTable, type TableSlice } from "../../engine/counts/metric-table.js";

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
  /**
   * The page's rows as JSON text (an array of arrays), as JSON.stringify writes them: written straight
   * from the columns, and one string, not a thousand arrays, when it crosses from a worker thread.
   */
  dataJson: string;
  rowCount: number;
  next: PageInfo | null;
}

export interface ResultOptions {
  orgId: string;
  kind: ResultKind;
  columns: string[];
  extra?: Record<string, unknown>;
  /** Every row of the answer, as columns. */
  table: MetricTable;
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
  const { table, pageSize } = o;
  const meta = { requestId, pageSize, totalRows: table.length };
  if (table.length > pageSize) {
    // The pages stay columns: slices of the table, stored as they are.
    const pages: TableSlice[] = [];
    for (let from = 0; from < table.length; from += pageSize)
      pages.push({ table, from, to: Math.min(table.length, from + pageSize) });
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
  const rowCount = Math.min(table.length, pageSize);
  const dataJson = tableJson(table, 0, rowCount);
  return { requestId, columns: o.columns, extra, dataJson, rowCount, next: nextOf(meta, 1) };
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
    dataJson: JSON.stringify(rows),
    rowCount: rows.length,
    next: nextOf(result, page),
  };
  return answer;
}
