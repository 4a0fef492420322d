import type { VehicleClass } from "../engine/trips/types.js";
import { notFound } from "./errors.js";

/**
 * Travel modes of the zone-analysis interface and the vehicle classes each
 * covers. Matched case-insensitively; the canonical spelling is returned.
 */
export const TRAVEL_MODES: Record<string, readonly VehicleClass[]> = {
  All_Vehicles: ["personal", "medium_commercial", "heavy_commercial"],
  Personal: ["personal"],
  Truck: ["medium_commercial", "heavy_commercial"],
  Bicycle: ["bicycle"],
  Pedestrian: ["pedestrian"],
};

export interface TravelMode {
  name: string;
  vehicleClasses: readonly VehicleClass[];
}

export function findTravelMode(name: string): TravelMode | null {
  const wanted = name.trim().toLowerCase();
  const canonical = Object.keys(TRAVEL_MODES).find((m) => m.toLowerCase() === wanted);
  return canonical ? { name: canonical, vehicleClasses: TRAVEL_MODES[canonical] } : null;
}

export function requireTravelMode(name: string, field = "travel_mode"): TravelMode {
  const mode = findTravelMode(name);
  if (!mode)
    throw notFound(
      "unknown_travel_mode",
      `unknown travel mode "${name}"; known modes: ${Object.keys(TRAVEL_MODES).join(", ")}`,
      field,
    );
  return mode;
}
