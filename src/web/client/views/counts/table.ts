import { el } from "../../ui.js";
import { nextSort, sortRows, type SegmentRow, type SortKey, type SortOrder } from "./sort.js";

/** Rows listed at most; the map shows every segment. */
export const MAX_LISTED_SEGMENTS = 500;

const COLUMNS: { key: SortKey; label: string; numeric: boolean }[] = [
  { key: "name", label: "Road", numeric: false },
  { key: "trips_volume", label: "Expanded trips/day", numeric: true },
  { key: "vmt", label: "VMT", numeric: true },
  { key: "avg_speed", label: "Avg mph", numeric: true },
];

/**
 * The segments with data as a table sortable by any column (header buttons, aria-sort); each road name is a
 * button choosing the segment: the keyboard's way to what clicking the map does.
 */
export class SegmentTable {
  private rows: SegmentRow[] = [];
  private order: SortOrder = { key: "trips_volume", descending: true };
  private selected: number | null = null;
  private readonly head = el("thead");
  private readonly body = el("tbody");
  readonly element: HTMLTableElement;
  readonly note = el("p", { className: "hint" });

  constructor(
    caption: string,
    private readonly choose: (segmentId: number) => void,
  ) {
    this.element = el(
      "table",
      { className: "counts-table" },
      el("caption", {}, caption),
      this.head,
      this.body,
    );
  }

  show(rows: SegmentRow[]): void {
    this.rows = rows;
    this.render();
  }

  select(segmentId: number | null): void {
    this.selected = segmentId;
    for (const row of this.body.rows) {
      const current = Number(row.dataset.segmentId) === segmentId;
      row.classList.toggle("selected", current);
      row.querySelector("button")?.setAttribute("aria-pressed", String(current));
    }
  }

  /** Puts the keyboard back on a segment's row (after its chart closes). */
  focusRow(segmentId: number): void {
    this.body.querySelector<HTMLButtonElement>(`tr[data-segment-id="${segmentId}"] button`)?.focus();
  }

  private render(): void {
    this.head.replaceChildren(el("tr", {}, ...COLUMNS.map((c) => this.headerCell(c))));
    const sorted = sortRows(this.rows, this.order).slice(0, MAX_LISTED_SEGMENTS);
    this.body.replaceChildren(...sorted.map((r) => this.rowOf(r)));
    this.note.textContent =
      this.rows.length > MAX_LISTED_SEGMENTS
        ? `The first ${MAX_LISTED_SEGMENTS} of ${this.rows.length.toLocaleString()} segments are listed; the map shows all.`
        : "";
    this.select(this.selected);
  }

  private headerCell(column: (typeof COLUMNS)[number]): HTMLTableCellElement {
    const sorted = this.order.key === column.key;
    const arrow = sorted ? (this.order.descending ? " ▼" : " ▲") : "";
    const button = el("button", { type: "button", className: "sort" }, column.label, arrow);
    button.addEventListener("click", () => {
      this.order = nextSort(this.order, column.key);
      this.render();
      this.head.querySelectorAll("button")[COLUMNS.indexOf(column)]?.focus();
    });
    const cell = el("th", { scope: "col", className: column.numeric ? "num" : "" }, button);
    if (sorted) cell.setAttribute("aria-sort", this.order.descending ? "descending" : "ascending");
    return cell;
  }

  private rowOf(r: SegmentRow): HTMLTableRowElement {
    const button = el(
      "button",
      { type: "button", className: "link", title: `Monthly chart of segment ${r.segment_id}` },
      r.name ?? `Segment ${r.segment_id}`,
    );
    button.addEventListener("click", () => this.choose(r.segment_id));
    return el(
      "tr",
      { dataset: { segmentId: String(r.segment_id) } },
      el("th", { scope: "row" }, button, el("small", {}, r.road_class.replace(/_/g, " "))),
      el("td", { className: "num" }, r.trips_volume.toLocaleString()),
      el("td", { className: "num" }, r.vmt.toLocaleString(undefined, { maximumFractionDigits: 0 })),
      el("td", { className: "num" }, r.avg_speed === null ? "–" : r.avg_speed.toFixed(1)),
    );
  }
}
