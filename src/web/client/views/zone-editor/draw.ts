/**
 * The editor's shapes on the map: Terra Draw for the zones that can be drawn and edited (one Polygon without
 * holes, one LineString), and a plain GeoJSON layer for zones loaded from files with several parts or holes,
 * whose shapes are kept as they came. Zones are known by a key: Terra Draw's feature id, or one made here.
 */
import type { Geometry, LineString, Polygon } from "geojson";
import type * as maplibregl from "maplibre-gl";
import {
  TerraDraw,
  TerraDrawLineStringMode,
  TerraDrawPolygonMode,
  TerraDrawSelectMode,
  type GeoJSONStoreFeatures,
  type HexColor,
} from "terra-draw";
import { TerraDrawMapLibreGLAdapter } from "terra-draw-maplibre-gl-adapter";
import { POLYGON_FEATURES } from "../../map.js";

export type EditableGeometry = Polygon | LineString;
export type DrawTool = "polygon" | "linestring" | "select";

export interface DrawingEvents {
  /** A shape was finished with a drawing tool. */
  created: (key: string, geometry: EditableGeometry) => void;
  /** Shapes were deleted on the map (the Delete key in the select tool). */
  deleted: (keys: string[]) => void;
  /** A shape was selected on the map, or the selection was cleared (null). */
  selected: (key: string | null) => void;
}

const COLOUR: Record<"zone" | "fault" | "selected", HexColor> = {
  zone: "#1f6feb",
  fault: "#d1242f",
  selected: "#f08c00",
};
/** A zone the save found fault with carries this property; its shape turns red. */
const FAULT = "fault";
const FIXED_SOURCE = "zone-editor-fixed";
const FIXED_LAYERS = [`${FIXED_SOURCE}-fill`, `${FIXED_SOURCE}-line`];

let lastKey = 0;
/**
 * Keys for zones and Terra Draw's features alike ("z1", "z2", …): unique on the page and, unlike
 * crypto.randomUUID, available on plain-http installations too.
 */
export const newZoneKey = () => `z${++lastKey}`;
const ZONE_KEYS = {
  getId: newZoneKey,
  isValidId: (id: string | number) => typeof id === "string" && id !== "",
};

const colourOf = (f: GeoJSONStoreFeatures) => (f.properties[FAULT] ? COLOUR.fault : COLOUR.zone);
/** Every shape may be moved, and its vertices dragged, added (midpoints) and deleted. */
const EDITABLE = {
  feature: {
    draggable: true,
    coordinates: { midpoints: true, draggable: true, deletable: true },
  },
};

function createDraw(map: maplibregl.Map): TerraDraw {
  return new TerraDraw({
    idStrategy: ZONE_KEYS,
    adapter: new TerraDrawMapLibreGLAdapter({ map, prefixId: "zone-editor" }),
    modes: [
      new TerraDrawPolygonMode({
        styles: { fillColor: colourOf, outlineColor: colourOf, fillOpacity: 0.25, outlineWidth: 2 },
      }),
      new TerraDrawLineStringMode({ styles: { lineStringColor: colourOf, lineStringWidth: 5 } }),
      new TerraDrawSelectMode({
        flags: { polygon: EDITABLE, linestring: EDITABLE },
        styles: {
          selectedPolygonColor: COLOUR.selected,
          selectedPolygonOutlineColor: COLOUR.selected,
          selectedLineStringColor: COLOUR.selected,
        },
      }),
    ],
  });
}

export class ZoneDrawing {
  private draw: TerraDraw | null = null;
  private fixed: GeoJSON.Feature[] = [];

  constructor(
    private readonly map: maplibregl.Map,
    private readonly events: DrawingEvents,
  ) {}

  get started(): boolean {
    return this.draw !== null;
  }

  /** Puts the tools on the map with these shapes; answers the keys Terra Draw refused. */
  start(shapes: { key: string; geometry: EditableGeometry }[]): string[] {
    this.stop();
    const draw = createDraw(this.map);
    draw.start();
    draw.on("finish", (id, context) => {
      if (context.action === "draw") this.events.created(String(id), this.geometry(String(id))!);
    });
    draw.on("change", (ids, type) => {
      // Deletions by the select tool; those the editor asked for are already gone from its list, and
      // those of stopping (the store is cleared) are not deletions of zones.
      if (type === "delete" && this.draw === draw) this.events.deleted(ids.map(String));
    });
    draw.on("select", (id) => this.events.selected(String(id)));
    draw.on("deselect", () => this.events.selected(null));
    this.draw = draw;
    return shapes.filter((s) => !this.add(s.geometry, s.key)).map((s) => s.key);
  }

  /** Takes every shape off the map (Terra Draw's layers and the fixed ones). */
  stop(): void {
    if (this.draw) {
      const draw = this.draw;
      this.draw = null;
      draw.stop();
    }
    this.fixed = [];
    for (const layer of FIXED_LAYERS) if (this.map.getLayer(layer)) this.map.removeLayer(layer);
    if (this.map.getSource(FIXED_SOURCE)) this.map.removeSource(FIXED_SOURCE);
  }

  setTool(tool: DrawTool): void {
    this.draw?.setMode(tool);
  }

  /** Adds a shape under `key`; false when Terra Draw refuses it (or is not on the map). */
  add(geometry: EditableGeometry, key: string): boolean {
    if (!this.draw) return false;
    const mode = geometry.type === "Polygon" ? "polygon" : "linestring";
    const [result] = this.draw.addFeatures([{ type: "Feature", id: key, geometry, properties: { mode } }]);
    return result.valid;
  }

  has(key: string): boolean {
    return this.draw?.hasFeature(key) ?? false;
  }

  remove(key: string): void {
    if (this.draw?.hasFeature(key)) this.draw.removeFeatures([key]);
    this.fixed = this.fixed.filter((f) => f.properties?.key !== key);
    this.refreshFixed();
  }

  geometry(key: string): EditableGeometry | undefined {
    const feature = this.draw?.hasFeature(key) ? this.draw.getSnapshotFeature(key) : undefined;
    return feature?.geometry as EditableGeometry | undefined;
  }

  /** Selects a drawn shape (switching to the select tool), so its vertices can be dragged. */
  select(key: string): void {
    if (this.draw?.hasFeature(key)) this.draw.selectFeature(key);
  }

  /** Zones the save found fault with turn red, the others back to blue. */
  markFaults(faulty: Set<string>): void {
    const draw = this.draw;
    if (!draw) return;
    for (const feature of draw.getSnapshot()) {
      const key = String(feature.id);
      if (feature.properties.mode === "polygon" || feature.properties.mode === "linestring")
        if (Boolean(feature.properties[FAULT]) !== faulty.has(key))
          draw.updateFeatureProperties(key, { [FAULT]: faulty.has(key) });
    }
    for (const f of this.fixed) f.properties!.fault = faulty.has(f.properties!.key as string);
    this.refreshFixed();
  }

  /** Shapes kept as they came from a file (several parts or holes): shown, not editable. */
  showFixed(shapes: { key: string; geometry: Geometry }[]): void {
    this.fixed = shapes.map((s) => ({
      type: "Feature",
      geometry: s.geometry,
      properties: { key: s.key, fault: false },
    }));
    this.refreshFixed();
  }

  private refreshFixed(): void {
    const data: GeoJSON.FeatureCollection = { type: "FeatureCollection", features: this.fixed };
    const source = this.map.getSource<maplibregl.GeoJSONSource>(FIXED_SOURCE);
    if (source) source.setData(data);
    else if (this.fixed.length > 0) this.addFixedLayers(data);
  }

  private addFixedLayers(data: GeoJSON.FeatureCollection): void {
    const colour = [
      "case",
      ["get", "fault"],
      COLOUR.fault,
      COLOUR.zone,
    ] as maplibregl.ExpressionSpecification;
    this.map.addSource(FIXED_SOURCE, { type: "geojson", data });
    this.map.addLayer({
      id: FIXED_LAYERS[0],
      type: "fill",
      source: FIXED_SOURCE,
      filter: POLYGON_FEATURES,
      paint: { "fill-color": colour, "fill-opacity": 0.2 },
    });
    this.map.addLayer({
      id: FIXED_LAYERS[1],
      type: "line",
      source: FIXED_SOURCE,
      paint: { "line-color": colour, "line-width": 2, "line-dasharray": [2, 1] },
    });
  }
}
