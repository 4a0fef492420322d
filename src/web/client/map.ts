import * as maplibregl from "maplibre-gl";
import type { Bbox, SegmentCollection } from "./api.js";
import { addBasemap, fetchBasemap } from "./basemap.js";
import { MAP_BACKGROUND, ROAD_STYLE } from "./road-style.js";

/** Sources and layers of the Zone sets tab's sets are named `zones-{uuid}…`. */
const ZONE_SET_PREFIX = "zones-";

const ZONE_COLOURS = ["#7048e8", "#d6336c", "#1098ad", "#2b8a3e", "#c2255c", "#5c7cfa"];

/** `["match", ["get", "road_class"], "motorway", v, …, fallback]` for one property of ROAD_STYLE. */
function byRoadClass<K extends "colour" | "width">(key: K, fallback: (typeof ROAD_STYLE)[string][K]) {
  const pairs = Object.entries(ROAD_STYLE).flatMap(([cls, style]) => [cls, style[key]]);
  return [
    "match",
    ["get", "road_class"],
    ...pairs,
    fallback,
  ] as unknown as maplibregl.ExpressionSpecification;
}

/** Layer filters by kind of geometry; zones are stored as Multi*, drawn shapes are single: match both. */
export const POLYGON_FEATURES: maplibregl.FilterSpecification = [
  "match",
  ["geometry-type"],
  ["Polygon", "MultiPolygon"],
  true,
  false,
];
export const LINE_FEATURES: maplibregl.FilterSpecification = [
  "match",
  ["geometry-type"],
  ["LineString", "MultiLineString"],
  true,
  false,
];

/** No tile server is reachable offline: the style holds a plain background and Streetflow's own GeoJSON. */
const OFFLINE_STYLE: maplibregl.StyleSpecification = {
  version: 8,
  sources: {},
  layers: [{ id: "background", type: "background", paint: { "background-color": MAP_BACKGROUND } }],
};

export class StreetMap {
  readonly map: maplibregl.Map;
  private readonly loaded: Promise<void>;
  private readonly popup = new maplibregl.Popup({
    closeButton: false,
    closeOnClick: false,
    maxWidth: "260px",
  });
  private zoneColourIndex = 0;
  /** Whether zone sets are drawn: only while the Zone sets tab is in front. */
  private zoneSetsVisible = true;

  constructor(container: HTMLElement) {
    this.map = new maplibregl.Map({
      container,
      style: OFFLINE_STYLE,
      center: [0, 20],
      zoom: 1,
      attributionControl: false,
    });
    this.map.addControl(new maplibregl.NavigationControl(), "top-right");
    this.map.addControl(new maplibregl.ScaleControl(), "bottom-left");
    this.map.addControl(
      new maplibregl.AttributionControl({
        compact: true,
        customAttribution: "Road data © OpenStreetMap contributors",
      }),
    );
    // The optional basemap goes in first, so everything drawn later lies above it.
    const basemap = fetchBasemap();
    this.loaded = new Promise<void>((resolve) => this.map.once("load", () => resolve())).then(async () =>
      addBasemap(this.map, await basemap),
    );
  }

  /** Draws (or replaces) the road network and, when asked, fits the view to `bbox`. */
  async showNetwork(segments: SegmentCollection, fitTo?: Bbox): Promise<void> {
    await this.loaded;
    const source = this.map.getSource<maplibregl.GeoJSONSource>("network");
    if (source) source.setData(segments);
    else this.addNetworkLayers(segments);
    if (fitTo) this.map.fitBounds(fitTo, { padding: 24, animate: false });
  }

  currentBbox(): Bbox {
    const b = this.map.getBounds();
    return [b.getWest(), b.getSouth(), b.getEast(), b.getNorth()].map((v, i) =>
      Math.max(i % 2 === 0 ? -180 : -90, Math.min(i % 2 === 0 ? 180 : 90, v)),
    ) as Bbox;
  }

  /** Adds a zone set's polygons (filled) and lines; answers the colour used, for the list's swatch. */
  async showZoneSet(uuid: string, zones: GeoJSON.FeatureCollection): Promise<string> {
    await this.loaded;
    const colour = ZONE_COLOURS[this.zoneColourIndex++ % ZONE_COLOURS.length];
    const id = `${ZONE_SET_PREFIX}${uuid}`;
    this.map.addSource(id, { type: "geojson", data: zones });
    this.map.addLayer({
      id: `${id}-fill`,
      type: "fill",
      source: id,
      filter: POLYGON_FEATURES,
      paint: { "fill-color": colour, "fill-opacity": 0.2 },
    });
    this.map.addLayer({
      id: `${id}-outline`,
      type: "line",
      source: id,
      filter: POLYGON_FEATURES,
      paint: { "line-color": colour, "line-width": 1.5 },
    });
    this.map.addLayer({
      id: `${id}-line`,
      type: "line",
      source: id,
      filter: LINE_FEATURES,
      paint: { "line-color": colour, "line-width": 5, "line-opacity": 0.8 },
      layout: { "line-cap": "round" },
    });
    for (const layer of [`${id}-fill`, `${id}-line`]) this.describeOnPointer(layer);
    this.applyZoneSetVisibility();
    return colour;
  }

  /**
   * Shows or hides every drawn zone set, keeping them loaded: the Zone sets tab shows its sets only while
   * it is in front, so they are not mistaken for an analysis' zones under the flow map or the counts.
   */
  setZoneSetsVisible(visible: boolean): void {
    this.zoneSetsVisible = visible;
    if (!visible) this.popup.remove();
    this.applyZoneSetVisibility();
  }

  private applyZoneSetVisibility(): void {
    const visibility = this.zoneSetsVisible ? "visible" : "none";
    for (const layer of this.map.getStyle()?.layers ?? [])
      if (layer.id.startsWith(ZONE_SET_PREFIX))
        this.map.setLayoutProperty(layer.id, "visibility", visibility);
  }

  hideZoneSet(uuid: string): void {
    const id = `${ZONE_SET_PREFIX}${uuid}`;
    for (const layer of [`${id}-fill`, `${id}-outline`, `${id}-line`])
      if (this.map.getLayer(layer)) this.map.removeLayer(layer);
    if (this.map.getSource(id)) this.map.removeSource(id);
    this.popup.remove();
  }

  /** Brings one zone into view and names it: the keyboard's way to what hovering shows. */
  focusZone(zone: GeoJSON.Feature): void {
    const bbox = bboxOf(zone.geometry);
    if (!bbox) return;
    this.map.fitBounds(bbox, { padding: 48, maxZoom: 17 });
    this.popup
      .setLngLat([(bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2])
      .setText(describe(zone.properties ?? {}))
      .addTo(this.map);
  }

  private addNetworkLayers(segments: SegmentCollection): void {
    this.map.addSource("network", { type: "geojson", data: segments });
    const width = byRoadClass("width", 1);
    // Zone sets shown before the network finished loading stay on top of it.
    const firstZoneLayer = this.map.getStyle().layers.find((l) => l.id.startsWith(ZONE_SET_PREFIX))?.id;
    this.map.addLayer(
      {
        id: "network",
        type: "line",
        source: "network",
        layout: { "line-cap": "round", "line-join": "round" },
        paint: {
          "line-color": byRoadClass("colour", "#999999"),
          // Thin when zoomed out, wide up close; classes keep their relative widths.
          "line-width": [
            "interpolate",
            ["exponential", 1.6],
            ["zoom"],
            10,
            ["*", width, 0.3],
            15,
            width,
            19,
            ["*", width, 4],
          ],
        },
      },
      firstZoneLayer,
    );
    this.describeOnPointer("network");
  }

  /** A hover tooltip, and a click that pins it (touch screens have no hover). */
  private describeOnPointer(layer: string): void {
    const show = (e: maplibregl.MapLayerMouseEvent) => {
      const feature = e.features?.[0];
      if (!feature) return;
      this.popup.setLngLat(e.lngLat).setText(describe(feature.properties)).addTo(this.map);
    };
    this.map.on("mousemove", layer, (e) => {
      this.map.getCanvas().style.cursor = "pointer";
      show(e);
    });
    this.map.on("click", layer, show);
    this.map.on("mouseleave", layer, () => {
      this.map.getCanvas().style.cursor = "";
      this.popup.remove();
    });
  }
}

/** Zones have a name; segments a name (maybe null), class and id. */
function describe(p: Record<string, unknown>): string {
  if (p.segment_id !== undefined) {
    const name = typeof p.name === "string" && p.name ? `${p.name} · ` : "";
    return `${name}${String(p.road_class).replace("_", " ")} · segment ${p.segment_id}`;
  }
  return `Zone: ${String(p.name ?? "(unnamed)")}`;
}

/** [w, s, e, n] of any GeoJSON geometry, or null when it has no positions. */
export function bboxOf(geometry: GeoJSON.Geometry): Bbox | null {
  const box: Bbox = [Infinity, Infinity, -Infinity, -Infinity];
  const visit = (value: unknown): void => {
    if (!Array.isArray(value)) return;
    if (typeof value[0] === "number") {
      const [x, y] = value as number[];
      box[0] = Math.min(box[0], x);
      box[1] = Math.min(box[1], y);
      box[2] = Math.max(box[2], x);
      box[3] = Math.max(box[3], y);
    } else value.forEach(visit);
  };
  // Zones are never GeometryCollections; those count as empty.
  if (geometry.type !== "GeometryCollection") visit(geometry.coordinates);
  return box[0] === Infinity ? null : box;
}
