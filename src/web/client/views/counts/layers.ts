import * as maplibregl from "maplibre-gl";
import { circleRing } from "./geo.js";
import type { LonLat } from "./query.js";
import type { DrawnSegment } from "./result.js";
import { NO_DATA_COLOUR, styleOf } from "./scale.js";

const AREA = "counts-area";
const SEGMENTS = "counts-segments";
const LAYERS = [
  "counts-area-fill",
  "counts-area-line",
  "counts-nodata",
  "counts-selected",
  "counts-volume",
  "counts-place",
] as const;
/** Layers a pointer can pick a segment from. */
const SEGMENT_LAYERS = ["counts-volume", "counts-nodata"];

const empty = (): GeoJSON.FeatureCollection => ({ type: "FeatureCollection", features: [] });

/**
 * The counts explorer's map layers: the search circle and the place, the selected segments coloured and
 * sized by volume class, a highlight of the chosen one and a popup with its values. Shown only while the
 * Counts tab is in front.
 */
export class CountsLayers {
  private readonly popup = new maplibregl.Popup({
    closeButton: false,
    closeOnClick: false,
    maxWidth: "280px",
    className: "counts-popup",
  });
  private added = false;
  private visible = false;
  private classCount = 1;

  constructor(
    private readonly map: maplibregl.Map,
    private readonly onSegmentClick: (segmentId: number) => void,
    private readonly onMapClick: (point: LonLat) => void,
  ) {
    map.on("click", (e) => {
      if (!this.visible) return;
      const segment = this.segmentAt(e.point);
      if (segment) {
        this.showPopup(e.lngLat, segment);
        this.onSegmentClick(segment.segment_id);
      } else this.onMapClick([e.lngLat.lng, e.lngLat.lat]);
    });
  }

  show(): void {
    this.visible = true;
    this.map.getContainer().classList.add("counts-active");
    this.setVisibility("visible");
  }

  hide(): void {
    this.visible = false;
    this.map.getContainer().classList.remove("counts-active");
    this.setVisibility("none");
    this.popup.remove();
  }

  setArea(point: LonLat | null, radiusM: number): void {
    const area = empty();
    if (point)
      area.features.push(
        {
          type: "Feature",
          properties: {},
          geometry: { type: "Polygon", coordinates: [circleRing(point, radiusM)] },
        },
        { type: "Feature", properties: {}, geometry: { type: "Point", coordinates: point } },
      );
    this.source(AREA).setData(area);
  }

  setSegments(segments: { line: LonLat[]; props: DrawnSegment }[], classCount: number): void {
    this.classCount = classCount;
    this.source(SEGMENTS).setData({
      type: "FeatureCollection",
      features: segments.map(({ line, props }) => ({
        type: "Feature",
        id: props.segment_id,
        properties: props,
        geometry: { type: "LineString", coordinates: line },
      })),
    });
    this.map.setPaintProperty("counts-volume", "line-color", this.byClass("colour"));
    this.map.setPaintProperty("counts-volume", "line-width", this.zoomed(this.byClass("width")));
    this.popup.remove();
  }

  select(segmentId: number | null): void {
    this.ensureLayers();
    this.map.setFilter("counts-selected", ["==", ["get", "segment_id"], segmentId ?? -1]);
  }

  /** Pans to a segment chosen from the list when none of it is in view. */
  reveal(line: LonLat[]): void {
    const bounds = this.map.getBounds();
    if (line.some((p) => bounds.contains(p))) return;
    this.map.easeTo({ center: line[Math.floor(line.length / 2)] });
  }

  /** The map view around a circle, with room for the drawer at the bottom. */
  fitTo(bbox: [number, number, number, number]): void {
    this.map.fitBounds(bbox, { padding: { top: 40, left: 40, right: 40, bottom: 40 }, maxZoom: 18 });
  }

  private segmentAt(point: maplibregl.Point): DrawnSegment | null {
    const box: [maplibregl.PointLike, maplibregl.PointLike] = [
      [point.x - 4, point.y - 4],
      [point.x + 4, point.y + 4],
    ];
    const feature = this.map.queryRenderedFeatures(box, { layers: SEGMENT_LAYERS })[0];
    return feature ? (feature.properties as DrawnSegment) : null;
  }

  private showPopup(at: maplibregl.LngLat, s: DrawnSegment): void {
    this.popup.setLngLat(at).setDOMContent(describeSegment(s)).addTo(this.map);
  }

  private source(id: string): maplibregl.GeoJSONSource {
    this.ensureLayers();
    return this.map.getSource<maplibregl.GeoJSONSource>(id)!;
  }

  private setVisibility(value: "visible" | "none"): void {
    if (!this.added) return;
    for (const id of LAYERS) this.map.setLayoutProperty(id, "visibility", value);
  }

  /** `["match", cls, 0, v0, 1, v1, …]` over the classes drawn; no-data segments have their own layer. */
  private byClass(key: "colour" | "width"): maplibregl.ExpressionSpecification {
    const pairs = Array.from({ length: this.classCount }, (_, i) => [i, styleOf(i, this.classCount)[key]]);
    return [
      "match",
      ["get", "cls"],
      ...pairs.flat(),
      styleOf(0, 1)[key],
    ] as unknown as maplibregl.ExpressionSpecification;
  }

  /** Thin when zoomed out, the class width at zoom 16, wider up close. */
  private zoomed(width: maplibregl.ExpressionSpecification | number): maplibregl.ExpressionSpecification {
    return ["interpolate", ["linear"], ["zoom"], 12, ["*", width, 0.4], 16, width, 19, ["*", width, 2]];
  }

  /** Layers are added on first use (the style has long loaded by then: the user picked a place). */
  private ensureLayers(): void {
    if (this.added) return;
    this.added = true;
    const map = this.map;
    const layout = { visibility: this.visible ? "visible" : "none" } as const;
    const lines = { ...layout, "line-cap": "round", "line-join": "round" } as const;
    map.addSource(AREA, { type: "geojson", data: empty() });
    map.addSource(SEGMENTS, { type: "geojson", data: empty() });
    map.addLayer({
      id: "counts-area-fill",
      type: "fill",
      source: AREA,
      filter: ["==", ["geometry-type"], "Polygon"],
      layout,
      paint: { "fill-color": "#1f6feb", "fill-opacity": 0.06 },
    });
    map.addLayer({
      id: "counts-area-line",
      type: "line",
      source: AREA,
      filter: ["==", ["geometry-type"], "Polygon"],
      layout,
      paint: { "line-color": "#1f6feb", "line-width": 1.5, "line-dasharray": [3, 2] },
    });
    map.addLayer({
      id: "counts-nodata",
      type: "line",
      source: SEGMENTS,
      filter: ["<", ["get", "cls"], 0],
      layout: lines,
      paint: { "line-color": NO_DATA_COLOUR, "line-width": this.zoomed(1.5), "line-dasharray": [2, 1.5] },
    });
    map.addLayer({
      id: "counts-selected",
      type: "line",
      source: SEGMENTS,
      filter: ["==", ["get", "segment_id"], -1],
      layout: lines,
      paint: { "line-color": "#1f6feb", "line-width": this.zoomed(16), "line-opacity": 0.55 },
    });
    map.addLayer({
      id: "counts-volume",
      type: "line",
      source: SEGMENTS,
      filter: [">=", ["get", "cls"], 0],
      layout: lines,
      paint: { "line-color": this.byClass("colour"), "line-width": this.zoomed(this.byClass("width")) },
    });
    map.addLayer({
      id: "counts-place",
      type: "circle",
      source: AREA,
      filter: ["==", ["geometry-type"], "Point"],
      layout,
      paint: {
        "circle-radius": 7,
        "circle-color": "#1f6feb",
        "circle-stroke-color": "#ffffff",
        "circle-stroke-width": 2.5,
      },
    });
    for (const layer of SEGMENT_LAYERS) {
      map.on("mousemove", layer, (e) => {
        const feature = e.features?.[0];
        if (!feature) return;
        map.getCanvas().style.cursor = "pointer";
        this.showPopup(e.lngLat, feature.properties as DrawnSegment);
      });
      map.on("mouseleave", layer, () => {
        map.getCanvas().style.cursor = "";
        this.popup.remove();
      });
    }
  }
}

/** The popup's text: name, class, id and the month's values. */
function describeSegment(s: DrawnSegment): HTMLElement {
  const box = document.createElement("div");
  const title = document.createElement("strong");
  title.textContent = s.name ?? `Segment ${s.segment_id}`;
  const meta = document.createElement("div");
  meta.textContent = `${s.road_class.replace(/_/g, " ")} · segment ${s.segment_id}`;
  const values = document.createElement("div");
  values.textContent =
    s.trips_volume == null || s.cls < 0
      ? "No trips in this month."
      : `${s.trips_volume.toLocaleString()} expanded trips/day · ${(s.vmt ?? 0).toLocaleString()} VMT · ` +
        (s.avg_speed == null ? "no speed" : `${s.avg_speed} mph`);
  box.append(title, meta, values);
  return box;
}
