/**
 * An OD analysis' results: a drawer over the bottom of the map area with the filters, a sortable table of
 * the flows and a bar chart by day part, and the flow map on the shared map.
 */
import type { Feature, FeatureCollection } from "geojson";
import type { AppContext } from "../../context.js";
import { bboxOf } from "../../map.js";
import { el, setStatus, statusLine } from "../../ui.js";
import type { AnalysesApi, AnalysisDetail } from "./api.js";
import { DayPartChart } from "./chart.js";
import { FLOW_COLOURS, FlowMap } from "./flow-map.js";
import { flowUnits, METHOD_PAGE, type FlowUnits } from "./units.js";
import { readRoutes, routeFeatures, RouteMap, type RouteRecord } from "./route-map.js";
import {
  OD_METRICS,
  captionOf,
  chartedZone,
  dayPartProfile,
  flowFeatures,
  flowsInSlice,
  headingOf,
  isHomeWorkMetric,
  pairKey,
  parseHomeWorkCsv,
  parseNpCsv,
  parseOdCsv,
  parseValueCsv,
  placeShares,
  SPEED_METRICS,
  speedFeatures,
  VALUE_METRICS,
  sliceOptions,
  sortFlows,
  topFlows,
  zoneAnchors,
  type NpMeasure,
  type OdFlow,
  type Slice,
  type SortColumn,
  type SortDirection,
} from "./flows.js";

/** Rows the table renders at most; the CSV download has them all. */
const MAX_TABLE_ROWS = 500;
const TOP_CHOICES: [string, number | null][] = [
  ["Top 10", 10],
  ["Top 25", 25],
  ["Top 50", 50],
  ["Top 100", 100],
  ["Top 250", 250],
  ["All", null],
];
interface Column {
  key: SortColumn;
  label: string;
  numeric: boolean;
}
/** The table's columns; the value's label says what the analysis' output type measures. */
const columnsFor = (units: FlowUnits): Column[] => [
  { key: "originName", label: "Origin", numeric: false },
  { key: "destinationName", label: "Destination", numeric: false },
  { key: "odTraffic", label: units.column, numeric: true },
  { key: "originTraffic", label: "Origin total", numeric: true },
  { key: "destinationTraffic", label: "Dest. total", numeric: true },
  { key: "avgTripDuration", label: "Avg min", numeric: true },
];
/** Network_Performance's columns: the flow fields hold speed, free flow, index and seconds (parseNpCsv). */
const SPEED_COLUMNS: Column[] = [
  { key: "originName", label: "Segment", numeric: false },
  { key: "odTraffic", label: "Avg speed", numeric: true },
  { key: "originTraffic", label: "Free flow", numeric: true },
  { key: "destinationTraffic", label: "Travel time index", numeric: true },
  { key: "avgTripDuration", label: "Avg sec", numeric: true },
];
/** metric_type=travel_time: no speeds; the seconds on the segment are the rows' value. */
const TRAVEL_TIME_COLUMNS: Column[] = [
  { key: "originName", label: "Segment", numeric: false },
  { key: "odTraffic", label: "Avg sec", numeric: true },
  { key: "destinationTraffic", label: "Travel time index", numeric: true },
];
const MIN_DRAWER_PX = 140;

const fmt = (n: number | null) => (n === null || Number.isNaN(n) ? "–" : n.toLocaleString());
/** Top-routes analyses draw their routes (the top_routes shapefile) instead of flows. */
const isRoutes = (d: AnalysisDetail) => d.analysis_type.startsWith("Top_Routes_");
const NO_FLOWS: FeatureCollection = { type: "FeatureCollection", features: [] };
const arrow = (f: Pick<OdFlow, "originName" | "destinationName">) => `${f.originName} → ${f.destinationName}`;

function select(label: string, onChange: () => void): { field: HTMLElement; input: HTMLSelectElement } {
  const input = el("select", { id: `flows-${label.toLowerCase().replace(/\W+/g, "-")}` });
  input.addEventListener("change", onChange);
  return { field: el("label", { className: "filter", htmlFor: input.id }, label, input), input };
}

function setOptions(input: HTMLSelectElement, options: [label: string, value: string][], keep = true): void {
  const previous = input.value;
  input.replaceChildren(...options.map(([label, value]) => el("option", { value }, label)));
  if (keep && options.some(([, v]) => v === previous)) input.value = previous;
}

export class AnalysisResults {
  private readonly drawer: HTMLElement;
  private readonly heading = el("h2", { id: "flows-heading" });
  private readonly status = statusLine();
  private readonly mapNote = el("p", { className: "flow-note", attrs: { role: "status" } });
  private readonly body = el("div", { className: "drawer-body", id: "flows-body" });
  private readonly collapse = el(
    "button",
    { type: "button", attrs: { "aria-controls": "flows-body", "aria-expanded": "true" } },
    "Collapse",
  );
  private readonly tableHead = el("tr");
  private readonly tableRows = el("tbody");
  private readonly tableNote = el("p", { className: "hint" });
  private readonly unitNote = el("span", { className: "unit-note" });
  private readonly tableCaption = el("caption", { id: "flows-table-caption" }, "Origin-destination flows");
  private readonly legendText = el(
    "span",
    {},
    "Width and colour: the flow's value; arrows point to the destination; circles: trips within a zone. ",
  );
  private readonly chartTitle = el("span", { id: "flows-chart-title" });
  private readonly wholeAnalysis = el(
    "button",
    { type: "button", className: "link", hidden: true },
    "Show the whole analysis",
  );
  private readonly canvas = el("canvas", { attrs: { role: "img", "aria-labelledby": "flows-chart-title" } });
  private readonly chartBox = el("div", { className: "chart-box" }, this.canvas);
  private readonly filters = {
    metric: select("Metric", () => void this.loadMetric()),
    device: select("Vehicles", () => this.render()),
    dayType: select("Day type", () => this.render()),
    dayPart: select("Day part", () => this.render()),
    top: select("Flows on the map", () => this.render()),
  };
  private readonly flowMap: FlowMap;
  private readonly routeMap: RouteMap;
  /** The open top-routes analysis' routes; null for flow analyses. */
  private routes: RouteRecord[] | null = null;
  private readonly chartFigure = el("figure", { className: "flow-chart" });
  private chart: DayPartChart | null = null;
  private detail: AnalysisDetail | null = null;
  private flows: OdFlow[] = [];
  /** What np_* rows were read by: speed, or (metric_type=travel_time) seconds on the segment. */
  private npMeasure: NpMeasure = "speed";
  private slice: OdFlow[] = [];
  private zones: { origins: Feature[]; destinations: Feature[] } = { origins: [], destinations: [] };
  /** The analysis' own destinations (zone sets or OD preset areas), while a home/work metric draws places. */
  private analysisDestinations: Feature[] = [];
  /** A zone activity's preset areas of its home and work places (geography_type), else none. */
  private homeWorkAreas: Feature[] = [];
  private selected: string | null = null;
  private sort: { column: SortColumn; direction: SortDirection } = {
    column: "odTraffic",
    direction: "descending",
  };
  private active = true;
  private loadId = 0;

  constructor(
    private readonly ctx: AppContext,
    private readonly api: AnalysesApi,
  ) {
    this.flowMap = new FlowMap(ctx.map.map, (key) => this.select(key));
    this.routeMap = new RouteMap(ctx.map.map);
    setOptions(
      this.filters.top.input,
      TOP_CHOICES.map(([label, n]) => [label, String(n ?? "all")]),
    );
    this.filters.top.input.value = "50";
    const close = el("button", { type: "button" }, "Close");
    close.addEventListener("click", () => this.close());
    this.collapse.addEventListener("click", () => this.setCollapsed(!this.body.hidden));
    this.wholeAnalysis.addEventListener("click", () => this.select(null));
    const separator = this.resizeHandle();
    const legend = el(
      "div",
      { className: "flow-legend" },
      el("span", { className: "ramp", attrs: { "aria-hidden": "true" } }),
      el(
        "span",
        {},
        this.legendText,
        this.unitNote,
        " ",
        el("a", { href: METHOD_PAGE, target: "_blank" }, "How the figures are made"),
      ),
    );
    const ramp = legend.querySelector<HTMLElement>(".ramp")!;
    ramp.style.background = `linear-gradient(to right, ${FLOW_COLOURS.map(([, c]) => c).join(", ")})`;
    this.drawer = el(
      "section",
      { className: "analysis-drawer", hidden: true, attrs: { "aria-labelledby": "flows-heading" } },
      separator,
      el(
        "div",
        { className: "drawer-head" },
        this.heading,
        el("div", { className: "drawer-buttons" }, this.collapse, close),
      ),
      this.body,
    );
    this.body.append(
      el("div", { className: "flow-filters" }, ...Object.values(this.filters).map((f) => f.field)),
      legend,
      this.mapNote,
      this.status,
      el(
        "div",
        { className: "drawer-panes" },
        el(
          "div",
          { className: "flow-table-wrap" },
          el(
            "table",
            { className: "flow-table", attrs: { "aria-labelledby": "flows-table-caption" } },
            this.tableCaption,
            el("thead", {}, this.tableHead),
            this.tableRows,
          ),
          this.tableNote,
        ),
        this.chartFigure,
      ),
    );
    this.chartFigure.append(el("figcaption", {}, this.chartTitle, " ", this.wholeAnalysis), this.chartBox);
    const area = document.getElementById("map-area")!;
    area.append(this.drawer);
    // The map's bottom controls (scale, attribution) ride above the drawer instead of under it.
    new ResizeObserver(() =>
      area.style.setProperty(
        "--analysis-drawer-height",
        `${this.drawer.hidden ? 0 : this.drawer.offsetHeight}px`,
      ),
    ).observe(this.drawer);
  }

  /** What the open analysis' numbers measure (index until one is open). */
  private get units(): FlowUnits {
    if (this.homeWork)
      return {
        column: "Share of trips (%)",
        inline: "% of the travellers' trips",
        axis: "Share of the travellers' trips (%)",
        explanation:
          "Home and work locations: the share of each kind of traveller's trips in the zone whose device lives (works) in the place.",
      };
    return flowUnits(this.detail?.output_type);
  }

  /** Whether the metric shown is a home or work location metric (places instead of destinations). */
  private get homeWork(): boolean {
    return isHomeWorkMetric(this.filters.metric.input.value);
  }

  get openUuid(): string | null {
    return this.drawer.hidden ? null : (this.detail?.uuid ?? null);
  }

  /** Opens the results of a Data Available OD analysis: its zones, its metric, the map and the drawer. */
  async open(detail: AnalysisDetail): Promise<void> {
    const load = ++this.loadId;
    this.detail = detail;
    this.selected = null;
    this.flows = [];
    this.routes = null;
    const routes = isRoutes(detail);
    this.heading.textContent = headingOf(detail.analysis_type, detail.name);
    for (const f of [this.filters.metric, this.filters.top, this.filters.device]) f.field.hidden = routes;
    this.chartFigure.hidden = routes;
    this.tableCaption.textContent = captionOf(detail.analysis_type);
    if (routes)
      this.legendText.textContent =
        "Width and colour: the route's share of its zone pair's (zone's) trips, the most used on top. ";
    this.unitNote.textContent = this.units.explanation;
    this.drawer.hidden = false;
    this.setCollapsed(false);
    const metrics = [
      ...OD_METRICS.filter((m) => detail.metrics.includes(m)),
      ...detail.metrics.filter(isHomeWorkMetric),
    ];
    setOptions(
      this.filters.metric.input,
      metrics.map((m) => [m, m]),
      false,
    );
    setStatus(this.status, "Loading the zones and the flows…", "loading");
    this.renderTable();
    try {
      const uuids = [...new Set([...detail.oz_sets, ...detail.dz_sets].map((s) => s.uuid))];
      const sets = new Map(
        await Promise.all(uuids.map(async (u) => [u, await this.ctx.api.zoneSet(u)] as const)),
      );
      if (load !== this.loadId) return;
      // OD_Preset_Geography sends trips to preset areas, named like the CSV's destination zones.
      const presets = detail.geography_type
        ? await this.ctx.api.request<FeatureCollection>(
            "GET",
            `/api/v2/preset_geographies/${encodeURIComponent(detail.country)}/${encodeURIComponent(detail.geography_type)}`,
          )
        : null;
      if (load !== this.loadId) return;
      const origins = detail.oz_sets.flatMap((s) => sets.get(s.uuid)?.features ?? []);
      // A segment analysis' polygon rows are network segments: drawn at the segments' own positions.
      const segments =
        detail.analysis_type === "Segment_Analysis"
          ? await this.segmentFeatures(detail.country, origins)
          : [];
      if (load !== this.loadId) return;
      // A zone activity's geography_type is where its home and work places are reported.
      const odPresets = detail.analysis_type === "Zone_Activity_Analysis" ? null : presets;
      this.homeWorkAreas = odPresets ? [] : (presets?.features ?? []);
      this.analysisDestinations = odPresets
        ? odPresets.features
        : detail.dz_sets.flatMap((s) => sets.get(s.uuid)?.features ?? []);
      this.zones = { origins: [...origins, ...segments], destinations: this.analysisDestinations };
      if (routes) await this.loadRoutes(detail);
      else await this.loadMetric(true);
    } catch (err) {
      if (load === this.loadId) this.ctx.showError(this.status, "The results failed to load", err);
    }
  }

  /** The network segments within the polygon zones, named as segment rows are (flows.ts segmentRowName). */
  private async segmentFeatures(country: string, zones: Feature[]): Promise<Feature[]> {
    const polygons = zones.filter((z) => /Polygon/.test(z.geometry?.type ?? ""));
    if (polygons.length === 0) return [];
    const boxes = polygons.map((z) => bboxOf(z.geometry)).filter((b) => b !== null);
    if (boxes.length === 0) return [];
    const box: [number, number, number, number] = [
      Math.min(...boxes.map((b) => b[0])),
      Math.min(...boxes.map((b) => b[1])),
      Math.max(...boxes.map((b) => b[2])),
      Math.max(...boxes.map((b) => b[3])),
    ];
    const found = await this.ctx.api.segments(country, box);
    // The server names a nameless segment after its OSM way (segment id = way id × 10,000 + piece).
    return found.features.map((f) => {
      const id = f.properties.segment_id;
      const road = f.properties.name ?? `way ${Math.floor(id / 10_000)}`;
      return { ...f, properties: { ...f.properties, name: `${road} (${id})` } };
    });
  }

  close(): void {
    this.loadId++;
    this.drawer.hidden = true;
    this.detail = null;
    this.flowMap.setVisible(false);
    this.routeMap.setVisible(false);
  }

  /** The Analyses tab came to the front (true) or left (false): the drawer and the flows go with it. */
  setActive(active: boolean): void {
    this.active = active;
    const open = this.detail !== null;
    this.drawer.hidden = !(active && open);
    this.flowMap.setVisible(active && open);
    this.routeMap.setVisible(active && open && this.routes !== null);
  }

  private async loadMetric(fit = false): Promise<void> {
    const detail = this.detail;
    const metric = this.filters.metric.input.value;
    if (!detail || !metric) {
      setStatus(this.status, "This analysis has no origin-destination metric to map.", "error");
      return;
    }
    const load = this.loadId;
    setStatus(this.status, `Loading ${metric}…`, "loading");
    try {
      const { text } = await this.api.metric(detail.uuid, metric);
      if (load !== this.loadId) return;
      this.zones.destinations = this.analysisDestinations;
      if (isHomeWorkMetric(metric)) {
        const { flows, cells } = parseHomeWorkCsv(text);
        this.flows = flows;
        this.zones.destinations = cells.length ? cells : this.homeWorkAreas;
      } else if (this.isSpeed) ({ flows: this.flows, measure: this.npMeasure } = parseNpCsv(text));
      else this.flows = VALUE_METRICS.includes(metric) ? parseValueCsv(text) : parseOdCsv(text);
      this.showSpeedLabels();
      this.tableCaption.textContent = captionOf(detail.analysis_type, metric, this.npMeasure);
      this.heading.textContent = headingOf(detail.analysis_type, detail.name, metric, this.npMeasure);
      this.unitNote.textContent = this.units.explanation;
      this.filters.device.field.firstChild!.textContent = this.homeWork ? "Travellers" : "Vehicles";
      const options = this.sliceOptions();
      setOptions(
        this.filters.device.input,
        options.deviceTypes.map((d) => [d, d]),
      );
      setOptions(
        this.filters.dayType.input,
        options.dayTypes.map((d) => [d.replace(/^\d+: /, ""), d]),
      );
      setOptions(
        this.filters.dayPart.input,
        options.dayParts.map((d) => [d.replace(/^\d+: /, ""), d]),
      );
      this.filters.device.field.hidden = options.deviceTypes.length < 2 && !this.homeWork;
      setStatus(
        this.status,
        this.flows.length ? "" : `${metric} has no rows: no trip joined these zones in the chosen periods.`,
      );
      this.render();
      if (fit) this.fitMap();
    } catch (err) {
      if (load === this.loadId) this.ctx.showError(this.status, `${metric} failed to load`, err);
    }
  }

  /** The open metric is Network_Performance's speeds (np_*), not traffic. */
  private get isSpeed(): boolean {
    return SPEED_METRICS.includes(this.filters.metric.input.value);
  }

  /** Speeds read per period, not per day part, and have no top-N of flows. */
  private showSpeedLabels(): void {
    const speed = this.isSpeed;
    this.filters.dayPart.field.firstChild!.textContent = speed ? "Period" : "Day part";
    this.filters.top.field.hidden = speed;
    const byTime = this.npMeasure === "travel_time";
    this.legendText.textContent = !speed
      ? "Width and colour: the flow's value; arrows point to the destination; circles: trips within a zone. "
      : byTime
        ? "Colour: the segment's average travel time in the period, dark red the longest, light the shortest. "
        : "Colour: the segment's average speed in the period, dark red the slowest, light the fastest. ";
    this.unitNote.textContent = speed
      ? byTime
        ? "Seconds on the segment; travel time index: time over free-flow time."
        : "Speeds in the analysis' unit; travel time index: time over free-flow time."
      : this.units.explanation;
  }

  private get columns(): Column[] {
    if (!this.isSpeed) return columnsFor(this.units);
    return this.npMeasure === "travel_time" ? TRAVEL_TIME_COLUMNS : SPEED_COLUMNS;
  }

  /** The analysis' own day types and parts (those without trips too), the device types of the rows. */
  private sliceOptions() {
    const fromRows = sliceOptions(this.flows);
    // The analysis' own labels, unless its rows are sliced otherwise (AADT rows are per year).
    const labels = (list: { label: string }[] | undefined, fallback: string[]) =>
      list?.length && fallback.every((f) => list.some((d) => d.label === f))
        ? list.map((d) => d.label)
        : fallback;
    return {
      deviceTypes: fromRows.deviceTypes,
      dayTypes: labels(this.detail?.day_types, fromRows.dayTypes),
      dayParts: labels(this.detail?.day_parts, fromRows.dayParts),
    };
  }

  private currentSlice(): Slice {
    return {
      deviceType: this.filters.device.input.value,
      dayType: this.filters.dayType.input.value,
      dayPart: this.filters.dayPart.input.value,
    };
  }

  /** A top-routes analysis: its routes from the top_routes shapefile, sliced by day type and part. */
  private async loadRoutes(detail: AnalysisDetail): Promise<void> {
    const load = this.loadId;
    setStatus(this.status, "Loading the routes…", "loading");
    const { blob } = await this.api.shapefile(detail.uuid, "top_routes");
    const routes = await readRoutes(await blob.arrayBuffer());
    if (load !== this.loadId) return;
    this.routes = routes;
    const labels = (list: { label: string }[] | undefined, seen: string[]) =>
      list?.length ? list.map((d) => d.label) : [...new Set(seen)];
    setOptions(
      this.filters.dayType.input,
      labels(
        detail.day_types,
        routes.map((r) => r.dayType),
      ).map((d) => [d.replace(/^\d+: /, ""), d]),
    );
    setOptions(
      this.filters.dayPart.input,
      labels(
        detail.day_parts,
        routes.map((r) => r.dayPart),
      ).map((d) => [d.replace(/^\d+: /, ""), d]),
    );
    setStatus(this.status, routes.length ? "" : "No route: no trip met these zones in the chosen periods.");
    this.render();
    this.fitMap();
  }

  /** The routes of the chosen day type and part: lines by share on the map, and a table. */
  private renderRoutes(routes: RouteRecord[]): void {
    const { dayType, dayPart } = this.currentSlice();
    const shown = routes
      .filter((r) => r.dayType === dayType && r.dayPart === dayPart)
      .sort((a, b) => a.subject.localeCompare(b.subject) || a.rank - b.rank);
    const zones: FeatureCollection = {
      type: "FeatureCollection",
      features: [...this.zones.origins, ...this.zones.destinations],
    };
    void this.flowMap
      .show(NO_FLOWS, zones, () => "")
      .then(() => {
        this.flowMap.setVisible(this.active && this.detail !== null);
      });
    void this.routeMap.show(routeFeatures(shown)).then(() => {
      this.routeMap.setVisible(this.active && this.detail !== null && this.routes !== null);
    });
    this.mapNote.textContent =
      `${shown.length.toLocaleString()} routes on the map: line width and colour by the route's share of ` +
      "its zone pair's (zone's) trips.";
    this.drawer.dataset.flowsDrawn = String(shown.length);
    const units = this.units;
    const head = ["Zones", "Rank", "Route", units.column, "Share %", "Length", "Avg min"];
    this.tableHead.replaceChildren(
      ...head.map((h, i) => el("th", { scope: "col", className: i > 0 ? "num" : "" }, h)),
    );
    this.tableRows.replaceChildren(
      ...shown
        .slice(0, MAX_TABLE_ROWS)
        .map((r) =>
          el(
            "tr",
            {},
            el("td", {}, r.subject),
            ...[r.rank, r.routeId, r.traffic, r.share, r.length, r.minutes].map((v) =>
              el("td", { className: "num" }, fmt(v)),
            ),
          ),
        ),
    );
    this.tableNote.textContent =
      shown.length > MAX_TABLE_ROWS
        ? `The first ${MAX_TABLE_ROWS} of ${shown.length.toLocaleString()} routes; download the CSV for all.`
        : shown.length === 0 && routes.length > 0
          ? "No routes in this day type and day part."
          : "";
  }

  private render(): void {
    if (this.routes) {
      this.renderRoutes(this.routes);
      return;
    }
    this.slice = flowsInSlice(this.flows, this.currentSlice());
    if (this.selected && !this.slice.some((f) => pairKey(f) === this.selected)) this.selected = null;
    this.renderMap();
    this.renderTable();
    this.renderChart();
  }

  private renderMap(): void {
    if (this.isSpeed) {
      this.renderSpeedMap();
      return;
    }
    const topValue = this.filters.top.input.value;
    const shown = topFlows(this.slice, topValue === "all" ? null : Number(topValue));
    const origins = zoneAnchors(this.zones.origins);
    // Zone and segment metrics (za_*, sa_*, aadt_*) have no destination sets: each row sits at its own zone.
    const anchors = {
      origins,
      destinations: this.zones.destinations.length ? zoneAnchors(this.zones.destinations) : origins,
    };
    const { collection, unplaced } = flowFeatures(shown, anchors.origins, anchors.destinations);
    const zones: FeatureCollection = {
      type: "FeatureCollection",
      features: [...this.zones.origins, ...this.shadedPlaces(shown)],
    };
    const byKey = new Map(this.slice.map((f) => [pairKey(f), f]));
    void this.flowMap
      .show(collection, zones, (key) => this.describe(byKey.get(key)))
      .then(() => {
        // Closed or tab left while the layers were being added: keep them hidden.
        this.flowMap.setVisible(this.active && this.detail !== null);
        this.flowMap.highlight(this.selected);
        return this.homeWork ? this.flowMap.renderedPlaces() : 0;
      })
      .then((places) => {
        this.drawer.dataset.placesShaded = String(places);
      });
    const drawn = shown.length - unplaced;
    this.mapNote.textContent =
      `${drawn.toLocaleString()} of ${this.slice.length.toLocaleString()} flows on the map` +
      (unplaced === 0
        ? ""
        : this.homeWork
          ? " (places with fewer than 5 devices have no shape: see the table)"
          : ` (${unplaced} with a zone no longer in its zone set are left out)`) +
      ".";
    this.drawer.dataset.flowsDrawn = String(drawn);
  }

  /**
   * Home/work places shaded by their share (the largest of the zones shown, relative to the largest
   * place drawn); other metrics' destinations as they are.
   */
  private shadedPlaces(shown: OdFlow[]): Feature[] {
    if (!this.homeWork) return this.zones.destinations;
    const shareOf = new Map<string, number>();
    for (const f of shown) {
      const key = f.destinationName.toLowerCase();
      shareOf.set(key, Math.max(shareOf.get(key) ?? 0, f.odTraffic));
    }
    const placed = this.zones.destinations.flatMap((place) => {
      const share = shareOf.get(String(place.properties?.name ?? "").toLowerCase());
      return share === undefined ? [] : [{ place, share }];
    });
    // Relative to the largest place drawn: the suppressed places' row (no shape) would pale every cell.
    const max = Math.max(1, ...placed.map((p) => p.share));
    return placed.map(({ place, share }) => ({
      ...place,
      properties: { ...place.properties, share: share / max },
    }));
  }

  /** Network_Performance: every segment of the slice, its line coloured by its average speed. */
  private renderSpeedMap(): void {
    const { collection, unplaced } = speedFeatures(this.slice, this.zones.origins, this.npMeasure);
    const zones: FeatureCollection = { type: "FeatureCollection", features: this.zones.origins };
    const byKey = new Map(this.slice.map((f) => [pairKey(f), f]));
    void this.flowMap
      .show(collection, zones, (key) => this.describeSpeed(byKey.get(key)))
      .then(() => {
        this.flowMap.setVisible(this.active && this.detail !== null);
        this.flowMap.highlight(this.selected);
      });
    const drawn = collection.features.length;
    this.mapNote.textContent =
      `${drawn.toLocaleString()} of ${this.slice.length.toLocaleString()} segments on the map` +
      (unplaced ? ` (${unplaced} with a zone no longer in its zone set are left out)` : "") +
      ".";
    this.drawer.dataset.flowsDrawn = String(drawn);
  }

  private describeSpeed(f: OdFlow | undefined): string {
    if (!f) return "";
    if (this.npMeasure === "travel_time")
      return `${f.originName}, ${f.dayPart}: ${fmt(f.odTraffic)} s on the segment, travel time index ${fmt(f.destinationTraffic)}.`;
    return (
      `${f.originName}, ${f.dayPart}: average ${fmt(f.odTraffic)}, free flow ${fmt(f.originTraffic)}, ` +
      `travel time index ${fmt(f.destinationTraffic)}, ${fmt(f.avgTripDuration)} s on the segment.`
    );
  }

  private describe(f: OdFlow | undefined): string {
    if (!f) return "";
    const unit = this.units.inline;
    if (this.homeWork) {
      const living = this.filters.metric.input.value.startsWith("home_") ? "living" : "working";
      return `${f.deviceType} of ${f.originName}: ${f.odTraffic} % of their trips are by devices ${living} in ${f.destinationName}.`;
    }
    const duration = f.avgTripDuration === null ? "" : ` · average ${f.avgTripDuration} min`;
    return `${arrow(f)}: ${fmt(f.odTraffic)} ${unit}${duration}. Origin total ${fmt(f.originTraffic)}, destination total ${fmt(f.destinationTraffic)}.`;
  }

  private renderTable(): void {
    this.tableHead.replaceChildren(
      el("th", { scope: "col" }, el("span", { className: "visually-hidden" }, "Chart")),
      ...this.columns.map((c) => this.headerCell(c)),
    );
    const rows = sortFlows(this.slice, this.sort.column, this.sort.direction);
    this.tableRows.replaceChildren(...rows.slice(0, MAX_TABLE_ROWS).map((f) => this.tableRow(f)));
    this.tableNote.textContent =
      rows.length > MAX_TABLE_ROWS
        ? `The first ${MAX_TABLE_ROWS} of ${rows.length.toLocaleString()} rows in this order; download the CSV for all.`
        : rows.length === 0 && this.flows.length > 0
          ? "No flows in this day type and day part."
          : "";
  }

  private headerCell(c: Column): HTMLTableCellElement {
    const active = this.sort.column === c.key;
    // The arrow is decoration: aria-sort tells assistive technology the order.
    const mark = active ? (this.sort.direction === "ascending" ? " ▲" : " ▼") : "";
    const button = el(
      "button",
      { type: "button", className: "sort" },
      c.label,
      el("span", { attrs: { "aria-hidden": "true" } }, mark),
    );
    button.addEventListener("click", () => {
      const direction: SortDirection = active
        ? this.sort.direction === "ascending"
          ? "descending"
          : "ascending"
        : c.numeric
          ? "descending"
          : "ascending";
      this.sort = { column: c.key, direction };
      this.renderTable();
      this.tableHead.querySelector<HTMLButtonElement>(`th[data-column="${c.key}"] button`)?.focus();
    });
    return el(
      "th",
      {
        scope: "col",
        className: c.numeric ? "num" : "",
        dataset: { column: c.key },
        attrs: { "aria-sort": active ? this.sort.direction : "none" },
      },
      button,
    );
  }

  private tableRow(f: OdFlow): HTMLTableRowElement {
    const key = pairKey(f);
    const pressed = key === this.selected;
    const choose = el(
      "button",
      {
        type: "button",
        className: "pick",
        attrs: { "aria-pressed": String(pressed), "aria-label": `Chart ${arrow(f)}` },
      },
      "◉",
    );
    choose.addEventListener("click", () => this.select(pressed ? null : key));
    const row = el(
      "tr",
      { className: pressed ? "selected" : "", dataset: { key } },
      el("td", {}, choose),
      ...this.columns.map((c) =>
        el(
          "td",
          { className: c.numeric ? "num" : "" },
          c.numeric ? fmt(f[c.key] as number | null) : String(f[c.key]),
        ),
      ),
    );
    return row;
  }

  /** One pair (from the table or the map) or none: the chart follows, the map marks it. */
  private select(key: string | null): void {
    const focused = document.activeElement;
    const fromTable = focused instanceof HTMLElement && this.tableRows.contains(focused);
    const focusedKey = fromTable ? focused.closest("tr")?.dataset.key : undefined;
    this.selected = key;
    this.flowMap.highlight(key);
    this.renderTable();
    this.renderChart();
    if (key) this.tableRows.querySelector<HTMLElement>("tr.selected")?.scrollIntoView({ block: "nearest" });
    // The rows are rebuilt: the keyboard stays on the row it was on.
    if (focusedKey !== undefined)
      [...this.tableRows.querySelectorAll<HTMLTableRowElement>("tr")]
        .find((tr) => tr.dataset.key === focusedKey)
        ?.querySelector("button")
        ?.focus();
  }

  private renderChart(): void {
    if (!this.chart) this.chart = new DayPartChart(this.canvas);
    const slice = this.currentSlice();
    const pair = this.slice.find((f) => pairKey(f) === this.selected);
    this.wholeAnalysis.hidden = !pair;
    if (this.homeWork) {
      this.renderPlacesChart(pair);
      return;
    }
    this.chartBox.hidden = false;
    const profile = dayPartProfile(this.flows, slice, pair, this.sliceOptions().dayParts);
    // Speeds do not add up: the chart shows their mean over the segments of each period.
    const rowsPer = (part: string) =>
      this.flows.filter(
        (f) =>
          f.dayPart === part &&
          f.deviceType === slice.deviceType &&
          f.dayType === slice.dayType &&
          (!pair || pairKey(f) === pairKey(pair)),
      ).length;
    const bars = profile.map((b) => ({
      label: b.dayPart.replace(/^\d+: /, ""),
      value: this.isSpeed ? Math.round((10 * b.traffic) / Math.max(1, rowsPer(b.dayPart))) / 10 : b.traffic,
    }));
    const dayType = slice.dayType.replace(/^\d+: /, "");
    const what = pair
      ? this.isSpeed
        ? pair.originName
        : arrow(pair)
      : this.isSpeed
        ? "all segments"
        : "all flows";
    const npValue = this.npMeasure === "travel_time" ? "Average travel time (s)" : "Average speed";
    this.chartTitle.textContent = this.isSpeed
      ? `${npValue} by period, ${dayType}: ${what}`
      : `Trips per day by day part, ${dayType}: ${what}`;
    this.chart.update(bars, this.isSpeed ? npValue : this.units.axis);
    this.canvas.textContent = bars.map((b) => `${b.label}: ${b.value}`).join(", ");
  }

  /**
   * Home/work shares are per zone and traveller kind: added over zones they pass 100 %, so the chart shows
   * one zone's places (the chosen row's zone, or the slice's only zone) and waits for a choice otherwise.
   */
  private renderPlacesChart(pair: OdFlow | undefined): void {
    const zone = chartedZone(this.slice, pair);
    this.chartBox.hidden = zone === null;
    const { deviceType, dayType, dayPart } = this.currentSlice();
    const lives = this.filters.metric.input.value.startsWith("home_") ? "live" : "work";
    if (zone === null) {
      this.chartTitle.textContent = `Where the travellers ${lives}: choose a zone's row (◉) to chart its places.`;
      return;
    }
    const bars = placeShares(this.slice, zone).map((p) => ({ label: p.place, value: p.share }));
    const period = `${dayType.replace(/^\d+: /, "")}, ${dayPart.replace(/^\d+: /, "")}`;
    this.chartTitle.textContent = `Where the ${deviceType.toLowerCase()}s of ${zone} ${lives}, ${period}`;
    this.chart!.update(bars, this.units.axis);
    this.canvas.textContent = bars.map((b) => `${b.label}: ${b.value} %`).join(", ");
  }

  private fitMap(): void {
    const boxes = [...this.zones.origins, ...this.zones.destinations]
      .map((z) => (z.geometry ? bboxOf(z.geometry) : null))
      .filter((b) => b !== null);
    if (boxes.length === 0) return;
    const bbox: [number, number, number, number] = [
      Math.min(...boxes.map((b) => b[0])),
      Math.min(...boxes.map((b) => b[1])),
      Math.max(...boxes.map((b) => b[2])),
      Math.max(...boxes.map((b) => b[3])),
    ];
    this.flowMap.fitTo(bbox, this.drawer.hidden || this.body.hidden ? 48 : this.drawer.offsetHeight + 24);
  }

  private setCollapsed(collapsed: boolean): void {
    this.body.hidden = collapsed;
    this.drawer.classList.toggle("collapsed", collapsed);
    this.collapse.textContent = collapsed ? "Expand" : "Collapse";
    this.collapse.setAttribute("aria-expanded", String(!collapsed));
  }

  /** A separator to drag (or move with the arrow keys) that sets the drawer's height. */
  private resizeHandle(): HTMLElement {
    const handle = el("div", {
      className: "drawer-resize",
      tabIndex: 0,
      attrs: {
        role: "separator",
        "aria-orientation": "horizontal",
        "aria-label": "Resize the results panel",
      },
    });
    const area = () => document.getElementById("map-area")!;
    const setHeight = (px: number) => {
      const max = Math.max(MIN_DRAWER_PX, area().clientHeight - 48);
      const height = Math.round(Math.min(max, Math.max(MIN_DRAWER_PX, px)));
      this.drawer.style.height = `${height}px`;
      handle.setAttribute("aria-valuenow", String(Math.round((height / area().clientHeight) * 100)));
      this.setCollapsed(false);
    };
    handle.setAttribute("aria-valuemin", "0");
    handle.setAttribute("aria-valuemax", "100");
    handle.addEventListener("pointerdown", (e) => {
      handle.setPointerCapture(e.pointerId);
      const move = (m: PointerEvent) => setHeight(area().getBoundingClientRect().bottom - m.clientY);
      const up = () => {
        handle.removeEventListener("pointermove", move);
        handle.removeEventListener("pointerup", up);
      };
      handle.addEventListener("pointermove", move);
      handle.addEventListener("pointerup", up);
    });
    handle.addEventListener("keydown", (e) => {
      const step = { ArrowUp: 32, ArrowDown: -32 }[e.key];
      if (step === undefined) return;
      e.preventDefault();
      setHeight(this.drawer.offsetHeight + step);
    });
    return handle;
  }
}
