import type { TraceSource, VehicleClass } from "../engine/trips/types.js";
import type { TravelModeName } from "../shared/vocabulary.js";
import { fail } from "./errors.js";

const VEHICLES: readonly VehicleClass[] = ["personal", "medium_commercial", "heavy_commercial"];
const COMMERCIAL: readonly VehicleClass[] = ["medium_commercial", "heavy_commercial"];
const ALL_SOURCES: readonly TraceSource[] = ["lbs", "telematics"];

/** The vendor's metric-name suffix of a mode's traffic: od_all, od_comm, od_bike, ... */
export type ModeSuffix = "all" | "comm" | "bike" | "ped" | "bus" | "rail";

export interface TravelModeDef {
  vehicleClasses: readonly VehicleClass[];
  /** Trace sources the mode reads: LBS_Plus only phones, CVD_Plus only connected vehicles. */
  sources: readonly TraceSource[];
  suffix: ModeSuffix;
  /** Commercial traffic also split into medium and heavy vehicles (od_comm rows per weight class). */
  byWeight: boolean;
}

const mode = (
  vehicleClasses: readonly VehicleClass[],
  suffix: ModeSuffix,
  sources = ALL_SOURCES,
  byWeight = false,
): TravelModeDef => ({ vehicleClasses, sources, suffix, byWeight });

/**
 * Travel modes of the zone-analysis interface: the vehicle classes and trace sources each
 * reads, and the suffix its metric names carry. Matched case-insensitively; the canonical
 * spelling is returned. docs/analyses.md has the table.
 */
export const TRAVEL_MODES: Record<TravelModeName, TravelModeDef> = {
  All_Vehicles: mode(VEHICLES, "all"),
  All_Vehicles_LBS_Plus: mode(VEHICLES, "all", ["lbs"]),
  All_Vehicles_CVD_Plus: mode(VEHICLES, "all", ["telematics"]),
  All_Vehicles_By_Weight: mode(VEHICLES, "all", ALL_SOURCES, true),
  Personal: mode(["personal"], "all"),
  Truck: mode(COMMERCIAL, "comm", ALL_SOURCES, true),
  Bus: mode(["bus"], "bus"),
  Rail: mode(["rail"], "rail"),
  Bicycle: mode(["bicycle"], "bike"),
  Pedestrian: mode(["pedestrian"], "ped"),
};

export interface TravelMode extends TravelModeDef {
  name: string;
}

export function findTravelMode(name: string): TravelMode | null {
  const wanted = name.trim().toLowerCase();
  const canonical = Object.keys(TRAVEL_MODES).find((m) => m.toLowerCase() === wanted);
  return canonical ? { name: canonical, ...TRAVEL_MODES[canonical as TravelModeName] } : null;
}

export function requireTravelMode(name: string, field = "travel_mode"): TravelMode {
  const mode = findTravelMode(name);
  if (!mode)
    throw fail("unknown_travel_mode", { mode: name, valid: Object.keys(TRAVEL_MODES).join(", ") }, field);
  return mode;
}
