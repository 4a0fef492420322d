/**
 * The words both interfaces and the web application speak: one list each, read by the server (validation,
 * computation) and by the browser client (the choices its forms offer). Imports nothing, so any layer and
 * the client bundle (src/web/build.ts, esbuild) may import it. docs/api-conventions.md, docs/analyses.md
 * and docs/segment-counts.md describe the values.
 */

/** Roles of an organization's users, from most to least powerful. */
export const ROLES = ["admin", "analyst", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** Travel modes of the zone-analysis interface, in their canonical spelling (matched case-insensitively). */
export const TRAVEL_MODES = [
  "All_Vehicles",
  "All_Vehicles_LBS_Plus",
  "All_Vehicles_CVD_Plus",
  "All_Vehicles_By_Weight",
  "Personal",
  "Truck",
  "Bus",
  "Rail",
  "Bicycle",
  "Pedestrian",
] as const;
export type TravelModeName = (typeof TRAVEL_MODES)[number];

/** Travel modes whose trips are no vehicles: vehicle counts do not calibrate them (no volume output). */
export const NON_VEHICLE_TRAVEL_MODES: readonly TravelModeName[] = ["Bus", "Rail", "Bicycle", "Pedestrian"];

/**
 * Analysis types of the zone-analysis interface. The server's catalogue (src/domain/analyses/catalogue.ts)
 * implements each; a new type is added here first, and the compiler asks for its implementation.
 */
export const ANALYSIS_TYPES = [
  "OD_Analysis",
  "OD_Preset_Geography",
  "Zone_Activity_Analysis",
  "OD_MF_Analysis",
  "Segment_Analysis",
  "AADT",
  "Network_OD",
  "Network_Performance",
  "Top_Routes_OD",
  "Top_Routes_ZA",
] as const;
export type AnalysisTypeName = (typeof ANALYSIS_TYPES)[number];

/**
 * Network_Performance's `metric_type`: which figures the np_* CSVs carry besides the identity and traffic
 * columns (docs/analyses.md).
 */
export const NP_METRIC_TYPES = ["all", "speed", "travel_time"] as const;
export type NpMetricType = (typeof NP_METRIC_TYPES)[number];

/** Top_Routes_OD / _ZA's `top_routes_count`: routes kept per zone pair (zone), day type and day part. */
export const DEFAULT_TOP_ROUTES = 10;
export const MAX_TOP_ROUTES = 100;

/** Output types of an analysis (`output_type`). */
export const OUTPUT_TYPES = ["index", "volume", "trip_counts", "aadt", "zone_counts"] as const;
export type OutputType = (typeof OUTPUT_TYPES)[number];

/** Origin-destination metrics an analysis may carry (its CSVs), by name. */
export const OD_METRICS = ["od_all", "od_pers", "od_comm", "od_bike", "od_ped", "od_bus", "od_rail"] as const;

/** A day part by index with its inclusive hours (local time of the data). */
export interface DayPart {
  index: number;
  name: string;
  startHour: number;
  endHour: number;
}

/** The day parts: indexes of the counts interface, defaults of the zone-analysis interface. */
export const DAY_PARTS: readonly DayPart[] = [
  { index: 0, name: "All Day", startHour: 0, endHour: 23 },
  { index: 1, name: "Early AM", startHour: 0, endHour: 5 },
  { index: 2, name: "Peak AM", startHour: 6, endHour: 9 },
  { index: 3, name: "Mid-Day", startHour: 10, endHour: 14 },
  { index: 4, name: "Peak PM", startHour: 15, endHour: 18 },
  { index: 5, name: "Late PM", startHour: 19, endHour: 23 },
];

const twoDigits = (n: number) => String(n).padStart(2, "0");

/** The zone-analysis interface's default day parts, `name|HHHH` (`All Day|0023`). */
export const DEFAULT_DAY_PARTS: readonly string[] = DAY_PARTS.map(
  (p) => `${p.name}|${twoDigits(p.startHour)}${twoDigits(p.endHour)}`,
);

/** The zone-analysis interface's default day types, `name|days` (1 = Monday; Average Weekday is Mon–Thu). */
export const DEFAULT_DAY_TYPES: readonly string[] = [
  "Average Day|17",
  "Average Weekday|14",
  "Average Weekend Day|67",
];

/** Day types of the counts interface and their days of week (ISO: 1 = Monday … 7 = Sunday). */
export const COUNTS_DAY_TYPES = {
  all: [1, 2, 3, 4, 5, 6, 7],
  weekday: [1, 2, 3, 4, 5],
  weekend: [6, 7],
  monday: [1],
  tuesday: [2],
  wednesday: [3],
  thursday: [4],
  friday: [5],
  saturday: [6],
  sunday: [7],
} as const satisfies Record<string, readonly number[]>;
export type CountsDayType = keyof typeof COUNTS_DAY_TYPES;

/** Road classes Streetflow reports; every `*_link` highway becomes `ramp`. */
export const ROAD_CLASSES = [
  "motorway",
  "trunk",
  "primary",
  "secondary",
  "tertiary",
  "unclassified",
  "residential",
  "living_street",
  "service",
  "ramp",
  "track",
  "road",
  "pedestrian",
  "footway",
  "cycleway",
  "path",
  "steps",
] as const;
export type RoadClass = (typeof ROAD_CLASSES)[number];

/** Travel modes of the counts interface. */
export const COUNTS_MODES = ["vehicle", "truck", "bike", "ped"] as const;
export type CountsModeName = (typeof COUNTS_MODES)[number];

/** Directions of travel along a segment the counts interface tallies. */
export const DIRECTIONS = ["bidirectional", "with", "against"] as const;
export type Direction = (typeof DIRECTIONS)[number];

/** Columns a counts metrics call may ask for. */
export const METRIC_FIELDS = [
  "segment_id",
  "year_month",
  "trips_volume",
  "trips_sample_count",
  "vmt",
  "avg_speed",
  "free_flow_speed",
  "trip_purpose",
  "income",
  "road_class",
  "segment_length",
] as const;
export type MetricField = (typeof METRIC_FIELDS)[number];
