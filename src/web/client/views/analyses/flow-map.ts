/**
 * The flow layers on the shared map: curved lines between zone centroids (width and colour by traffic),
 * direction arrows, circles for trips within a zone, road segments coloured by speed, and the analysis'
 * zone outlines beneath. Own sources
 * and layers, shown only while the results are open and the Analyses tab is in front.
 */
import * as maplibregl from "maplibre-gl";
import type { FeatureCollection } from "geojson";

const FLOWS = "analysis-flows";
const ZONES = "analysis-zones";
const ARROW_IMAGE = "analysis-flow-arrow";
export const FLOW_LAYERS = {
  places: `${ZONES}-share`,
  zones: `${ZONES}-outline`,
  segments: `${FLOWS}-segment`,
  lines: `${FLOWS}-line`,
  highlight: `${FLOWS}-highlight`,
  arrows: `${FLOWS}-arrow`,
  intra: `${FLOWS}-intra`,
} as const;
const INTERACTIVE = [FLOW_LAYERS.segments, FLOW_LAYERS.lines, FLOW_LAYERS.arrows, FLOW_LAYERS.intra];

/** Colour ramp by share of the largest flow (light = small, dark red = large); the legend uses it too. */
export const FLOW_COLOURS: [share: number, colour: string][] = [
  [0, "#fdbb84"],
  [0.5, "#e34a33"],
  [1, "#7f0000"],
];
const MAX_WIDTH_PX = 12;

const byShare = (stops: [number, string | number][]) =>
  [
    "interpolate",
    ["linear"],
    ["get", "share"],
    ...stops.flat(),
  ] as unknown as maplibregl.ExpressionSpecification;
const kind = (k: string): maplibregl.ExpressionSpecification => ["==", ["get", "kind"], k];

/** An upward-pointing triangle as an alpha mask; drawn as SDF so its colour follows the flow's. */
function arrowImage(size = 32): { width: number; height: number; data: Uint8Array } {
  const data = new Uint8Array(size * size * 4);
  for (let y = 0; y < size; y++)
    for (let x = 0; x < size; x++) {
      // Apex at the top centre, base along the bottom: inside when |x - centre| ≤ half-width at row y.
      const halfWidth = ((y - 4) / (size - 8)) * (size / 2 - 4);
      const inside = y >= 4 && y <= size - 4 && Math.abs(x + 0.5 - size / 2) <= halfWidth;
      data.set(inside ? [255, 255, 255, 255] : [0, 0, 0, 0], (y * size + x) * 4);
    }
  return { width: size, height: size, data };
}

/** Resolves once the style can take sources and layers. */
function styleReady(map: maplibregl.Map): Promise<void> {
  return map.isStyleLoaded()
    ? Promise.resolve()
    : new Promise((resolve) => map.once("idle", () => resolve()));
}

export class FlowMap {
  private readonly popup = new maplibregl.Popup({
    closeButton: false,
    closeOnClick: false,
    maxWidth: "280px",
  });
  private describe: (key: string) => string = () => "";
  private added = false;

  constructor(
    private readonly map: maplibregl.Map,
    private readonly onSelect: (key: string) => void,
  ) {}

  /** Draws (or redraws) the flows and the analysis' zones; `describe` words a flow for its tooltip. */
  async show(
    flows: FeatureCollection,
    zones: FeatureCollection,
    describe: (key: string) => string,
  ): Promise<void> {
    await styleReady(this.map);
    this.describe = describe;
    if (!this.added) this.addLayers();
    this.map.getSource<maplibregl.GeoJSONSource>(FLOWS)!.setData(flows);
    this.map.getSource<maplibregl.GeoJSONSource>(ZONES)!.setData(zones);
    this.setVisible(true);
  }

  /**
   * How many distinct home/work places the map rendered shaded, once it has drawn what it was given (the
   * browser suite reads it from the drawer: the shading is proven drawn, not only computed).
   */
  async renderedPlaces(): Promise<number> {
    if (!this.added) return 0;
    if (!this.map.loaded()) await new Promise((resolve) => this.map.once("idle", resolve));
    const features = this.map.queryRenderedFeatures({ layers: [FLOW_LAYERS.places] });
    // A place cut by tile borders comes back once per tile.
    return new Set(features.map((f) => String(f.properties?.name))).size;
  }

  /** Marks one flow (from the table or a click), or none. */
  highlight(key: string | null): void {
    if (!this.added) return;
    this.map.setFilter(FLOW_LAYERS.highlight, ["all", kind("flow"), ["==", ["get", "key"], key ?? ""]]);
  }

  setVisible(visible: boolean): void {
    if (!this.added) return;
    for (const id of Object.values(FLOW_LAYERS))
      this.map.setLayoutProperty(id, "visibility", visible ? "visible" : "none");
    if (!visible) this.popup.remove();
  }

  /** Fits the zones into view above `bottomPx` (the drawer covering the map's lower part). */
  fitTo(bbox: [number, number, number, number], bottomPx: number): void {
    this.map.fitBounds(bbox, { padding: { top: 48, left: 48, right: 48, bottom: bottomPx }, maxZoom: 16 });
  }

  private addLayers(): void {
    const empty: FeatureCollection = { type: "FeatureCollection", features: [] };
    this.map.addSource(FLOWS, { type: "geojson", data: empty });
    this.map.addSource(ZONES, { type: "geojson", data: empty });
    if (!this.map.hasImage(ARROW_IMAGE)) this.map.addImage(ARROW_IMAGE, arrowImage(), { sdf: true });
    const colour = byShare(FLOW_COLOURS);
    // Home/work places (grid cells, preset areas) shaded by their share; other zones carry no share.
    this.map.addLayer({
      id: FLOW_LAYERS.places,
      type: "fill",
      source: ZONES,
      filter: ["has", "share"],
      paint: { "fill-color": colour, "fill-opacity": 0.45 },
    });
    this.map.addLayer({
      id: FLOW_LAYERS.zones,
      type: "line",
      source: ZONES,
      paint: { "line-color": "#495057", "line-width": 1.2, "line-dasharray": [2, 2] },
    });
    // Network_Performance: the segments themselves, coloured by speed (share 1 = slowest).
    this.map.addLayer({
      id: FLOW_LAYERS.segments,
      type: "line",
      source: FLOWS,
      filter: kind("segment"),
      layout: { "line-cap": "round", "line-join": "round" },
      paint: { "line-color": colour, "line-width": 7, "line-opacity": 0.9 },
    });
    this.map.addLayer({
      id: FLOW_LAYERS.highlight,
      type: "line",
      source: FLOWS,
      filter: ["all", kind("flow"), ["==", ["get", "key"], ""]],
      layout: { "line-cap": "round" },
      paint: {
        "line-color": "#1f6feb",
        "line-width": [
          "+",
          6,
          byShare([
            [0, 1.5],
            [1, MAX_WIDTH_PX],
          ]),
        ],
      },
    });
    this.map.addLayer({
      id: FLOW_LAYERS.lines,
      type: "line",
      source: FLOWS,
      filter: kind("flow"),
      layout: { "line-cap": "round" },
      paint: {
        "line-color": colour,
        "line-width": byShare([
          [0, 1.5],
          [1, MAX_WIDTH_PX],
        ]),
        "line-opacity": 0.85,
      },
    });
    this.map.addLayer({
      id: FLOW_LAYERS.arrows,
      type: "symbol",
      source: FLOWS,
      filter: kind("arrow"),
      layout: {
        "icon-image": ARROW_IMAGE,
        "icon-rotate": ["get", "bearing"],
        "icon-rotation-alignment": "map",
        "icon-size": byShare([
          [0, 0.45],
          [1, 0.9],
        ]),
        "icon-allow-overlap": true,
        "icon-ignore-placement": true,
      },
      paint: { "icon-color": colour, "icon-halo-color": "#ffffff", "icon-halo-width": 1 },
    });
    this.map.addLayer({
      id: FLOW_LAYERS.intra,
      type: "circle",
      source: FLOWS,
      filter: kind("intra"),
      paint: {
        "circle-color": colour,
        "circle-opacity": 0.7,
        "circle-radius": byShare([
          [0, 4],
          [1, 18],
        ]),
        "circle-stroke-color": "#ffffff",
        "circle-stroke-width": 1.5,
      },
    });
    for (const layer of INTERACTIVE) this.describeOnPointer(layer);
    this.added = true;
  }

  /** Hover names a flow and its traffic; a click pins the tooltip and selects the flow. */
  private describeOnPointer(layer: string): void {
    const show = (e: maplibregl.MapLayerMouseEvent) => {
      const key = e.features?.[0]?.properties?.key as string | undefined;
      if (key === undefined) return undefined;
      this.popup.setLngLat(e.lngLat).setText(this.describe(key)).addTo(this.map);
      return key;
    };
    this.map.on("mousemove", layer, (e) => {
      this.map.getCanvas().style.cursor = "pointer";
      show(e);
    });
    this.map.on("mouseleave", layer, () => {
      this.map.getCanvas().style.cursor = "";
      this.popup.remove();
    });
    this.map.on("click", layer, (e) => {
      const key = show(e);
      if (key !== undefined) this.onSelect(key);
    });
  }
}
