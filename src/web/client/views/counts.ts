import { ApiError } from "../api.js";
import type { AppContext, View } from "../context.js";
import { byId, el, setStatus } from "../ui.js";
import { CountsApi, type Place } from "./counts/api.js";
import { MonthlyDrawer, monthLabel } from "./counts/chart.js";
import { circleBbox } from "./counts/geo.js";
import { CountsLayers } from "./counts/layers.js";
import {
  DAY_PARTS,
  DAY_TYPES,
  DIRECTIONS,
  MAP_FIELDS,
  MODES,
  MONTHLY_FIELDS,
  RADIUS_M,
  clampRadius,
  monthValue,
  quotaUnits,
  type CountsQuery,
  type LonLat,
} from "./counts/query.js";
import { drawnSegments, segmentRows, type CountsResult, type RoadInfo } from "./counts/result.js";
import { legendEntries, volumeBreaks } from "./counts/scale.js";
import { setUpPlaceSearch } from "./counts/search.js";
import type { SegmentRow } from "./counts/sort.js";
import { SegmentTable } from "./counts/table.js";

const ESTIMATE_DELAY_MS = 300;

/** What the map and the table show: the query they answer, its rows (named) and lines, the years with data. */
interface Shown {
  query: CountsQuery;
  rows: SegmentRow[];
  lines: Map<number, LonLat[]>;
  years: number[];
}

/**
 * The "Counts" tab: pick a place (search or map click) and a radius, then see the month's traffic volume of
 * every segment around it on the map and in a sortable table; choosing a segment opens its monthly chart.
 */
export function countsView(ctx: AppContext): View {
  const ui = {
    form: byId<HTMLFormElement>("counts-form"),
    search: byId<HTMLInputElement>("counts-search"),
    placeList: byId<HTMLUListElement>("counts-place-list"),
    searchStatus: byId<HTMLElement>("counts-search-status"),
    place: byId<HTMLElement>("counts-place"),
    radius: byId<HTMLInputElement>("counts-radius"),
    radiusNumber: byId<HTMLInputElement>("counts-radius-number"),
    mode: byId<HTMLSelectElement>("counts-mode"),
    month: byId<HTMLSelectElement>("counts-month"),
    dayType: byId<HTMLSelectElement>("counts-day-type"),
    dayPart: byId<HTMLSelectElement>("counts-day-part"),
    direction: byId<HTMLSelectElement>("counts-direction"),
    cost: byId<HTMLElement>("counts-cost"),
    run: byId<HTMLButtonElement>("counts-run"),
    status: byId<HTMLElement>("counts-status"),
    results: byId<HTMLElement>("counts-results"),
    legend: byId<HTMLUListElement>("counts-legend"),
    drawn: byId<HTMLElement>("counts-drawn"),
    tableBox: byId<HTMLElement>("counts-table-box"),
  };
  const api = new CountsApi(ctx.api);
  let active = false;
  let place: { point: LonLat; label: string } | null = null;
  let shown: Shown | null = null;
  let selected: number | null = null;
  let years: number[] = [];
  let latestRun = 0;
  let latestChart = 0;
  let estimateTimer: number | undefined;

  const layers = new CountsLayers(
    ctx.map.map,
    (id) => void chooseSegment(id),
    (point) => setPlace(point, `Map point ${point[1].toFixed(5)}, ${point[0].toFixed(5)}`),
  );
  const drawer = new MonthlyDrawer(() => {
    const closing = selected;
    const hadFocus = drawer.element.contains(document.activeElement);
    void chooseSegment(null);
    if (hadFocus && closing !== null) table.focusRow(closing);
  });
  byId("map-area").append(drawer.element);
  const table = new SegmentTable("Segments with trips in the month", (id) => {
    const line = shown?.lines.get(id);
    if (line) layers.reveal(line);
    void chooseSegment(id);
  });
  ui.tableBox.append(table.element, table.note);

  fillSelect(ui.mode, MODES);
  fillSelect(ui.dayType, DAY_TYPES);
  fillSelect(ui.dayPart, DAY_PARTS);
  fillSelect(ui.direction, DIRECTIONS);
  for (const input of [ui.radius, ui.radiusNumber])
    Object.assign(input, {
      min: RADIUS_M.min,
      max: RADIUS_M.max,
      step: RADIUS_M.step,
      value: RADIUS_M.initial,
    });
  ui.radiusNumber.step = "1";

  const country = () => ctx.currentNetwork()?.country;
  const radiusM = () => clampRadius(Number(ui.radiusNumber.value));

  const currentQuery = (): CountsQuery | null => {
    const c = country();
    if (!c || !place || !ui.month.value) return null;
    return {
      country: c,
      mode: ui.mode.value,
      month: ui.month.value,
      dayType: ui.dayType.value,
      dayPart: Number(ui.dayPart.value),
      direction: ui.direction.value,
      point: place.point,
      radiusM: radiusM(),
    };
  };

  /** Quota errors say so plainly; a 401 signs out; anything else is shown with its message. */
  const reportError = (statusEl: HTMLElement, prefix: string, err: unknown) => {
    if (err instanceof ApiError && (err.status === 429 || err.status === 402))
      setStatus(statusEl, `Counts quota of this API key is used up: ${err.message}`, "error");
    else ctx.showError(statusEl, prefix, err);
  };

  function setPlace(point: LonLat, label: string): void {
    place = { point, label };
    ui.place.textContent = `Place: ${label}`;
    layers.setArea(point, radiusM());
    settingsChanged();
  }

  /** Any change of place or settings: the next "Show counts" answers it; until then the map says what it shows. */
  function settingsChanged(): void {
    if (shown) setStatus(ui.status, "Settings changed: choose “Show counts” to update the map.");
    clearTimeout(estimateTimer);
    estimateTimer = window.setTimeout(() => void estimateCost(), ESTIMATE_DELAY_MS);
  }

  /** The segment count is free: it tells what a metrics call will be charged before it is made. */
  async function estimateCost(): Promise<void> {
    const q = currentQuery();
    if (!q) {
      ui.cost.textContent = place ? "" : "Choose a place to see what the query costs.";
      return;
    }
    try {
      const segments = await api.segmentCount(q);
      if (currentQuery() === null || JSON.stringify(currentQuery()) !== JSON.stringify(q)) return;
      const units = quotaUnits(segments, MAP_FIELDS.length);
      ui.cost.textContent = api.hasCounts(q)
        ? `Already loaded for these settings: showing them again is not charged.`
        : `This query counts ${segments.toLocaleString()} segments × ${MAP_FIELDS.length} fields = ` +
          `${units.toLocaleString()} segment-fields against your key's monthly quota.`;
    } catch (err) {
      reportError(ui.cost, "Segment count failed", err);
    }
  }

  async function loadMonths(): Promise<void> {
    const c = country();
    if (!c) {
      setStatus(ui.status, "No road network is imported yet.");
      ui.run.disabled = true;
      return;
    }
    const mode = ui.mode.value;
    setStatus(ui.status, "Loading the months with data…", "loading");
    try {
      const ranges = await api.dateRanges(c, mode);
      if (country() !== c || ui.mode.value !== mode) return;
      years = ranges.years.map((y) => y.year);
      const previous = ui.month.value;
      const months = ranges.months.map((m) => ({
        value: monthValue(m),
        label: monthLabel(`${monthValue(m)}-01`),
      }));
      fillSelect(ui.month, [...months].reverse());
      if (months.some((m) => m.value === previous)) ui.month.value = previous;
      ui.run.disabled = months.length === 0;
      setStatus(ui.status, months.length === 0 ? "No trips of this travel mode are stored yet." : "");
      settingsChanged();
    } catch (err) {
      reportError(ui.status, "Months failed to load", err);
    }
  }

  async function run(): Promise<void> {
    const q = currentQuery();
    if (!q) {
      setStatus(
        ui.status,
        place ? "Choose a month." : "Choose a place first: search a street or click the map.",
        "error",
      );
      if (!place) ui.search.focus();
      return;
    }
    const request = ++latestRun;
    const charged = !api.hasCounts(q);
    ui.run.disabled = true;
    setStatus(ui.status, "Loading counts…", "loading");
    try {
      const [result, roads] = await Promise.all([
        api.counts(q),
        // Names only label the list and popups; without them the ids are shown.
        api.roads(q.country, circleBbox(q.point, q.radiusM)).catch((): RoadInfo => new Map()),
      ]);
      if (request !== latestRun) return;
      showResult(q, result, roads, charged);
    } catch (err) {
      if (request === latestRun) reportError(ui.status, "Counts failed", err);
    } finally {
      if (request === latestRun) ui.run.disabled = false;
    }
  }

  function showResult(q: CountsQuery, result: CountsResult, roads: RoadInfo, charged: boolean): void {
    const breaks = volumeBreaks(result.metrics.map((m) => m.trips_volume));
    layers.setSegments(drawnSegments(result, roads, breaks), breaks.length + 1);
    const rows = segmentRows(result, roads);
    shown = { query: q, rows, lines: result.lines, years: [...years] };
    renderLegend(breaks);
    table.show(rows);
    const withData = result.metrics.length;
    ui.drawn.textContent =
      `${withData.toLocaleString()} segments drawn with trips, ` +
      `${(result.lines.size - withData).toLocaleString()} without (dashed grey).`;
    ui.results.hidden = false;
    const units = quotaUnits(result.lines.size, MAP_FIELDS.length);
    setStatus(
      ui.status,
      `${monthLabel(`${q.month}-01`)}: ${withData.toLocaleString()} of ${result.lines.size.toLocaleString()} ` +
        `segments within ${q.radiusM} m have trips. ` +
        (charged
          ? `This query counted ${units.toLocaleString()} segment-fields against your quota.`
          : "Shown again from this page's results: not charged."),
    );
    void estimateCost();
    if (selected !== null) void chooseSegment(result.lines.has(selected) ? selected : null);
  }

  function renderLegend(breaks: number[]): void {
    ui.legend.replaceChildren(
      ...legendEntries(breaks).map((entry) => {
        const swatch = el("span", { className: "swatch line", attrs: { "aria-hidden": "true" } });
        swatch.style.background = entry.colour;
        swatch.style.height = `${entry.width}px`;
        return el("li", {}, swatch, entry.label);
      }),
      el(
        "li",
        {},
        el("span", { className: "swatch line nodata", attrs: { "aria-hidden": "true" } }),
        "no trips",
      ),
    );
  }

  /** Highlights a segment and loads its monthly series with the filters of the map it came from. */
  async function chooseSegment(id: number | null): Promise<void> {
    selected = id;
    layers.select(id);
    table.select(id);
    const request = ++latestChart;
    if (id === null || !shown) {
      drawer.setOpen(false);
      return;
    }
    const row = shown.rows.find((r) => r.segment_id === id);
    const subject = `${row?.name ?? "segment"} (segment ${id})`;
    drawer.setTitle(`${row?.name ?? "Segment"} · ${id}`);
    drawer.setOpen(active);
    drawer.clear();
    const q = shown.query;
    const units = quotaUnits(1, MONTHLY_FIELDS.length) * shown.years.length;
    setStatus(drawer.status, "Loading the months…", "loading");
    try {
      const months = await api.monthly(q, id, shown.years);
      if (request !== latestChart) return;
      drawer.show(months, subject);
      setStatus(
        drawer.status,
        months.length === 0
          ? "No trips in any month for these settings."
          : `${months.length} months with trips · ${optionLabel(ui.dayType, q.dayType)} · ` +
              `${optionLabel(ui.dayPart, String(q.dayPart))} · ${optionLabel(ui.direction, q.direction)}. ` +
              `Counts ${units} segment-fields the first time.`,
      );
    } catch (err) {
      if (request === latestChart) reportError(drawer.status, "Monthly counts failed", err);
    }
  }

  setUpPlaceSearch({
    input: ui.search,
    list: ui.placeList,
    search: (q) => {
      const c = country();
      return c ? api.places(c, q) : Promise.resolve([]);
    },
    choose: (p: Place) => {
      setPlace(p.point, p.name);
      layers.fitTo(circleBbox(p.point, radiusM()));
    },
    report: (state) => {
      if (state === "loading") setStatus(ui.searchStatus, "Searching…", "loading");
      else if (state === "empty") setStatus(ui.searchStatus, "No street of this network matches.");
      else if (state === "done") setStatus(ui.searchStatus, "");
      else reportError(ui.searchStatus, "Search failed", state);
    },
  });

  const setRadius = (value: number) => {
    const m = clampRadius(value);
    ui.radius.value = String(m);
    ui.radiusNumber.value = String(m);
    if (place) layers.setArea(place.point, m);
    settingsChanged();
  };
  ui.radius.addEventListener("input", () => setRadius(Number(ui.radius.value)));
  ui.radiusNumber.addEventListener("change", () => setRadius(Number(ui.radiusNumber.value)));
  ui.mode.addEventListener("change", () => void loadMonths());
  for (const select of [ui.month, ui.dayType, ui.dayPart, ui.direction])
    select.addEventListener("change", settingsChanged);
  ui.form.addEventListener("submit", (e) => {
    e.preventDefault();
    void run();
  });

  ctx.events.on("network-changed", () => {
    place = null;
    shown = null;
    ui.place.textContent = "No place chosen yet.";
    ui.search.value = "";
    ui.results.hidden = true;
    layers.setArea(null, 0);
    layers.setSegments([], 1);
    void chooseSegment(null);
    if (active) void loadMonths();
  });

  return {
    id: "counts",
    activate: () => {
      if (active) return;
      active = true;
      layers.show();
      drawer.setOpen(selected !== null && shown !== null);
      if (ui.month.options.length === 0) void loadMonths();
    },
    deactivate: () => {
      active = false;
      layers.hide();
      drawer.setOpen(false);
    },
  };
}

function fillSelect(
  select: HTMLSelectElement,
  options: readonly { value: string | number; label: string }[],
): void {
  select.replaceChildren(...options.map((o) => new Option(o.label, String(o.value))));
}

function optionLabel(select: HTMLSelectElement, value: string): string {
  return [...select.options].find((o) => o.value === value)?.text ?? value;
}
