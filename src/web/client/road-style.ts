/**
 * How the map draws road classes: colour and base width (px at zoom 15). Each legend entry has its own
 * hue or lightness, far enough apart (CIEDE2000, checked in test/unit/web-road-style.test.ts) to tell the
 * classes apart on the map; classes of one entry share its style. Unknown classes draw thin grey.
 */
import type { RoadClass } from "../../shared/vocabulary.js";
export interface RoadStyle {
  colour: string;
  width: number;
}

/** One legend entry: the classes it covers and how they are drawn. */
export interface RoadLegendEntry extends RoadStyle {
  classes: RoadClass[];
}

export const ROAD_LEGEND: RoadLegendEntry[] = [
  { classes: ["motorway"], colour: "#1c7ed6", width: 5 },
  { classes: ["trunk"], colour: "#2b8a3e", width: 4.5 },
  { classes: ["primary"], colour: "#e03131", width: 4 },
  { classes: ["secondary"], colour: "#f76707", width: 3.5 },
  { classes: ["tertiary"], colour: "#fab005", width: 3 },
  { classes: ["ramp"], colour: "#9c36b5", width: 2.5 },
  { classes: ["unclassified", "residential"], colour: "#868e96", width: 2 },
  { classes: ["living_street", "road"], colour: "#d4b483", width: 1.8 },
  { classes: ["service"], colour: "#adb5bd", width: 1.2 },
  { classes: ["track"], colour: "#8d5524", width: 1 },
  { classes: ["pedestrian"], colour: "#1098ad", width: 1.5 },
  { classes: ["footway", "path", "steps"], colour: "#74c0fc", width: 0.8 },
  { classes: ["cycleway"], colour: "#e64980", width: 1 },
];

/** The map's background (no basemap), which every road colour must stand out from. */
export const MAP_BACKGROUND = "#f4f1ea";

export const ROAD_STYLE: Record<string, RoadStyle> = Object.fromEntries(
  ROAD_LEGEND.flatMap(({ classes, colour, width }) => classes.map((c) => [c, { colour, width }])),
);

/** "living street, road" */
export function legendLabel(entry: RoadLegendEntry): string {
  return entry.classes.map((c) => c.replace("_", " ")).join(", ");
}
