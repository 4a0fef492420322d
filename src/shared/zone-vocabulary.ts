/**
 * The accepted values and limits of zone properties, with no imports so the web client's zone editor uses the
 * very same lists as the API's validation (src/domain/zone-properties.ts); in src/shared so both may import it.
 */

export const MAX_ZONE_NAME_LENGTH = 50;
/** Gate size in metres: a gate wider than a kilometre no longer marks one road. */
export const GATE_SIZE_RANGE = [1, 1000] as const;
/** Allowed deviation of the three traffic ratios' sum from 1.0. */
export const RATIO_SUM_TOLERANCE = 0.001;

export const ROAD_TYPES = ["Primary", "Secondary", "Local", "Ramp"] as const;
export const CALIBRATION_TYPES = ["ADT", "AADT", "AWDT", "AADWT"] as const;
