import type { PageInfo, ResultKind } from "../../app/counts/results.js";

/** The paging member of an answer: null when complete, else where the next page is. */
export function pagingBody(prefix: string, kind: ResultKind, next: PageInfo | null) {
  if (!next) return null;
  return {
    next_url: `${prefix}/${kind}/paging/${next.requestId}?page=${next.nextPage}`,
    request_id: next.requestId,
    page: next.nextPage,
    page_size: next.pageSize,
    total_rows: next.totalRows,
    total_pages: next.totalPages,
  };
}

/** `?page=N` (query strings are text); absent means page 2, the one after the first answer. */
export const requestedPage = (page: string | undefined) => (page === undefined ? 2 : Number(page));
