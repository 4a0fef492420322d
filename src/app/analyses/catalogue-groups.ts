import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import type { VehicleClass } from "../../engine/trips/types.js";
import { ALL, COMMERCIAL, modeOf, PERSONAL } from "./od-metrics.js";

/** Medium and heavy commercial groups of the OD metrics' device groups (od-metrics.ts GROUPS). */
const MEDIUM = 3;
const HEAVY = 4;

/**
 * The metrics of a catalogue type and the device groups each holds, named in the vendor's pattern
 * `<prefix>_<mode suffix>`: the mode's own traffic (`sa_all`, `sa_bike`, …; Truck: `sa_comm` split by
 * weight), plus `<prefix>_pers` / `<prefix>_comm` where a vehicle mode has those vehicles, as od_* does.
 */
export function metricGroups(spec: AnalysisSpec, prefix: string): [string, number[]][] {
  const mode = modeOf(spec);
  const has = (c: VehicleClass) => spec.vehicleClasses.includes(c);
  const commercial = mode.byWeight ? [COMMERCIAL, MEDIUM, HEAVY] : [COMMERCIAL];
  if (mode.suffix === "comm") return [[`${prefix}_comm`, commercial]];
  const out: [string, number[]][] = [[`${prefix}_${mode.suffix}`, [ALL]]];
  if (has("personal") && spec.vehicleClasses.length > 1) out.push([`${prefix}_pers`, [PERSONAL]]);
  if (has("medium_commercial") || has("heavy_commercial")) out.push([`${prefix}_comm`, commercial]);
  return out;
}

/** The trip- and traveler-attribute metrics asked for, renamed from od_* to the type's prefix. */
export function attributeMetricName(name: string, prefix: string): string {
  return name.replace(/^od_/, `${prefix}_`);
}
