/**
 * A top-routes analysis on the shared map: each route of the chosen day type and day part as a line along
 * its representative path, its width and colour set by its share of its zone pair's (zone's) trips. Read
 * from the analysis' `top_routes` shapefile, so the map shows exactly what the download holds.
 */
import * as maplibregl from "maplibre-gl";
import shp from "shpjs";
import type { Feature, FeatureCollection, LineString } from "geojson";
import { FLOW_COLOURS } from "./flow-map.js";

const SOURCE = "analysis-routes";
export const ROUTE_LAYER = `${SOURCE}-line`;
/** Line width in pixels at a share of 0 % and 100 %. */
const WIDTH_PX: [number, number] = [1.5, 14];

/** One record of the `top_routes` shapefile (see docs/analyses.md, Top_Routes_OD and Top_Routes_ZA). */
export interface RouteRecord {
  routeId: number;
  /** "Origin → Destination" (Top_Routes_OD) or the zone's name (Top_Routes_ZA). */
  subject: string;
  dayType: string;
  dayPart: string;
  rank: number;
  traffic: number;
  /** Percentage of the pair's (zone's) trips, 0..100. */
  share: number;
  length: number;
  minutes: number;
  trips: number;
  line: LineString;
}

const text = (v: unknown) => (v === null || v === undefined ? "" : String(v));
const num = (v: unknown) => (typeof v === "number" ? v : Number(v));

/** The shapefile's records as routes (a zip of one layer; shpjs answers its features). */
export async function readRoutes(zip: ArrayBuffer): Promise<RouteRecord[]> {
  const parsed = (await shp(zip)) as FeatureCollection | FeatureCollection[];
  const layer = Array.isArray(parsed) ? parsed[0] : parsed;
  return layer.features
    .filter((f): f is Feature<LineString> => f.geometry?.type === "LineString")
    .map((f) => {
      const p = f.properties ?? {};
      const subject =
        p.zone_name !== undefined ? text(p.zone_name) : `${text(p.origin_nm)} → ${text(p.dest_nm)}`;
      return {
        routeId: num(p.route_id),
        subject,
        dayType: text(p.day_type),
        dayPart: text(p.day_part),
        rank: num(p.rank),
        traffic: num(p.traffic),
        share: num(p.share),
        length: num(p.length),
        minutes: num(p.time_min),
        trips: num(p.trips),
        line: f.geometry,
      };
    });
}

/** Routes in a slice, most used (by share, then rank) drawn last so they lie on top. */
export function routeFeatures(routes: RouteRecord[]): FeatureCollection {
  const ordered = [...routes].sort((a, b) => a.share - b.share || b.rank - a.rank);
  return {
    type: "FeatureCollection",
    features: ordered.map((r) => ({
      type: "Feature",
      geometry: r.line,
      properties: { route_id: r.routeId, share: r.share, rank: r.rank, subject: r.subject },
    })),
  };
}

const byShare = (stops: [number, string | number][]) =>
  [
    "interpolate",
    ["linear"],
    ["get", "share"],
    ...stops.flat(),
  ] as unknown as maplibregl.ExpressionSpecification;

export class RouteMap {
  private added = false;
  private readonly popup = new maplibregl.Popup({ closeButton: false, closeOnClick: false });

  constructor(private readonly map: maplibregl.Map) {}

  async show(routes: FeatureCollection): Promise<void> {
    if (!this.map.isStyleLoaded()) await new Promise((r) => this.map.once("idle", r));
    if (!this.added) this.addLayer();
    (this.map.getSource(SOURCE) as maplibregl.GeoJSONSource).setData(routes);
  }

  setVisible(visible: boolean): void {
    if (!this.added) return;
    this.map.setLayoutProperty(ROUTE_LAYER, "visibility", visible ? "visible" : "none");
    if (!visible) this.popup.remove();
  }

  private addLayer(): void {
    this.map.addSource(SOURCE, { type: "geojson", data: { type: "FeatureCollection", features: [] } });
    this.map.addLayer({
      id: ROUTE_LAYER,
      type: "line",
      source: SOURCE,
      layout: { "line-cap": "round", "line-join": "round" },
      paint: {
        "line-width": byShare([
          [0, WIDTH_PX[0]],
          [100, WIDTH_PX[1]],
        ]),
        "line-color": byShare(FLOW_COLOURS.map(([share, colour]) => [share * 100, colour])),
        "line-opacity": 0.85,
      },
    });
    this.map.on("mousemove", ROUTE_LAYER, (e) => {
      const p = e.features?.[0]?.properties;
      if (!p) return;
      this.popup
        .setLngLat(e.lngLat)
        .setText(`Route ${p.route_id} (${p.subject}): #${p.rank}, ${p.share} % of the trips`)
        .addTo(this.map);
    });
    this.map.on("mouseleave", ROUTE_LAYER, () => this.popup.remove());
    this.added = true;
  }
}
