/** The counts interface's paging: a result larger than one page names the URL of the next. */

export interface Paging {
  next_url: string;
  request_id: string;
  page: number;
  page_size: number;
  total_rows: number;
  total_pages: number;
}

export interface PagedAnswer {
  columns: string[];
  data: unknown[][];
  paging: Paging | null;
}

/**
 * Every row of a paged answer: follows `paging.next_url` until a page says `paging: null`. Stops with an
 * error if the pages do not end by `total_pages` (so a server fault cannot loop the page forever).
 */
export async function collectPages<A extends PagedAnswer>(
  first: A,
  fetchPage: (url: string) => Promise<PagedAnswer>,
): Promise<A> {
  const data = [...first.data];
  let paging = first.paging;
  const lastPage = first.paging?.total_pages ?? 1;
  while (paging) {
    if (paging.page > lastPage) throw new Error(`paging went past page ${lastPage}`);
    const page = await fetchPage(paging.next_url);
    data.push(...page.data);
    paging = page.paging;
  }
  return { ...first, data, paging: null };
}
