import type { AnalysisTypeName } from "../../shared/vocabulary.js";
import type { Issue } from "../errors.js";
import type { GeographyTypes } from "../preset-geographies.js";
import type { StoredZoneSet } from "../records.js";
import { odPresetGeography } from "./od-preset-geography.js";
import { zoneActivity } from "./zone-activity.js";
import { odMfAnalysis } from "./od-mf.js";
import { segmentAnalysis } from "./segment-analysis.js";
import { aadtAnalysis } from "./aadt.js";
import { networkOd } from "./network-od.js";
import { networkPerformance, type NpMetricType } from "./network-performance.js";
import { topRoutesOd, topRoutesZa } from "./top-routes.js";

/** Zone-set fields a type may take besides `oz_sets` (which every type requires). */
export type ExtraZoneSetField = "dz_sets" | "mf_sets" | "az_sets";

/** What a type's own validation reads: the body, the look-ups it needs and the analysis' country (once known). */
export interface TypeRequest {
  body: Record<string, unknown>;
  /** The geography types imported per country (OD_Preset_Geography). */
  presetAreas: GeographyTypes;
  orgId: string;
  country: string | null;
  /** The zone sets the request references, by field. */
  sets: Partial<Record<"oz_sets" | ExtraZoneSetField, StoredZoneSet[]>>;
  issues: Issue[];
}

/** Type-specific parameters of a spec; each type fills only its own. */
export interface AnalysisOptions {
  /** OD_Preset_Geography: the preset geography of the destinations (`admin_8`, `zip`, …). */
  geographyType?: string;
  /** Zone_Activity_Analysis with home and work locations: the preset geography they are reported over (else the grid). */
  homeWorkGeography?: string;
  /** AADT: the year whose stored days the annual average is taken over. */
  aadtYear?: number;
  /** Top_Routes_OD / _ZA: routes kept per zone pair (zone), day type and day part (`top_routes_count`). */
  topRoutes?: number;
  /** Network_Performance: the figures reported (`metric_type`); absent in specs stored before it: all. */
  npMetricType?: NpMetricType;
}

/** One analysis type: the request fields it takes and how they become spec options. */
export interface AnalysisTypeDef {
  /** Canonical spelling of `analysis_type`. */
  name: AnalysisTypeName;
  /** Zone-set fields required besides `oz_sets`; the others are refused. */
  zoneSets: readonly ExtraZoneSetField[];
  /** Zone-set fields accepted (and validated) when given, not required. */
  optionalZoneSets?: readonly ExtraZoneSetField[];
  /** Request fields of this type only. */
  fields: readonly string[];
  /** The output_type values the type computes; all when absent. */
  outputTypes?: readonly string[];
  readOptions(request: TypeRequest): AnalysisOptions | Promise<AnalysisOptions>;
}

const odAnalysis: AnalysisTypeDef = {
  name: "OD_Analysis",
  zoneSets: ["dz_sets"],
  fields: [],
  readOptions: () => ({}),
};

/** Every analysis type the service runs; its position is irrelevant, its name is the key. */
export const ANALYSIS_CATALOGUE: readonly AnalysisTypeDef[] = [
  odAnalysis,
  odPresetGeography,
  zoneActivity,
  odMfAnalysis,
  segmentAnalysis,
  aadtAnalysis,
  networkOd,
  networkPerformance,
  topRoutesOd,
  topRoutesZa,
];

export const ALL_ZONE_SET_FIELDS: readonly ExtraZoneSetField[] = ["dz_sets", "mf_sets", "az_sets"];

/** Request fields of every type, for the unknown-field check. */
export const TYPE_FIELDS: readonly string[] = [
  ...ALL_ZONE_SET_FIELDS,
  ...new Set(ANALYSIS_CATALOGUE.flatMap((t) => t.fields)),
];

export function analysisTypeDef(name: string): AnalysisTypeDef | undefined {
  return ANALYSIS_CATALOGUE.find((t) => t.name === name);
}
