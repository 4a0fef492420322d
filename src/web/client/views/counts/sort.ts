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

/** Numbers first by value (missing speeds last either way), names alphabetically; ties by segment id. */
export function sortRows(rows: readonly SegmentRow[], order: SortOrder): SegmentRow[] {
  const sign = order.descending ? -1 : 1;
  const label = (r: SegmentRow) => r.name ?? `~segment ${r.segment_id}`;
  return [...rows].sort((a, b) => {
    let diff: number;
    if (order.key === "name") diff = sign * label(a).localeCompare(label(b));
    else {
      const x = a[order.key];
      const y = b[order.key];
      if (x === null || y === null) diff = x === y ? 0 : x === null ? 1 : -1;
      else diff = sign * (x - y);
    }
    return diff || a.segment_id - b.segment_id;
  });
}

/** Clicking the sorted column flips it; another column starts descending for numbers, ascending for names. */
export function nextSort(current: SortOrder, key: SortKey): SortOrder {
  if (current.key === key) return { key, descending: !current.descending };
  return { key, descending: key !== "name" };
}
