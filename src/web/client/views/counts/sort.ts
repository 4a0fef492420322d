/** Sorting of the segments table (no DOM). */

export interface SegmentRow {
  segment_id: number;
  name: string | null;
  road_class: string;
  trips_volume: number;
  vmt: number;
  avg_speed: number | null;
}

export type SortKey = "name" | "trips_volume" | "vmt" | "avg_speed";
export interface SortOrder {
  key: SortKey;
  descending: boolean;
}

/** Numbers by value, names alphabetically, missing values (no speed, no name) last either way; ties by id. */
export function sortRows(rows: readonly SegmentRow[], order: SortOrder): SegmentRow[] {
  const sign = order.descending ? -1 : 1;
  const key = order.key;
  const compare = (a: SegmentRow, b: SegmentRow) =>
    key === "name"
      ? compareMissingLast(a.name, b.name, (x, y) => sign * x.localeCompare(y))
      : compareMissingLast(a[key], b[key], (x, y) => sign * (x - y));
  return [...rows].sort((a, b) => compare(a, b) || a.segment_id - b.segment_id);
}

/** Clicking the sorted column flips it; another column starts descending for numbers, ascending for names. */
export function nextSort(current: SortOrder, key: SortKey): SortOrder {
  if (current.key === key) return { key, descending: !current.descending };
  return { key, descending: key !== "name" };
}

function compareMissingLast<T>(x: T | null, y: T | null, compare: (x: T, y: T) => number): number {
  if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
  return compare(x, y);
}
