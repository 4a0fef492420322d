import { ACCESS_BIKE, ACCESS_CAR, ACCESS_FOOT, type RoadClass, type RoadType } from "./types.js";

export type Tags = Record<string, string>;

const MOTOR_HIGHWAYS = new Set([
  "motorway",
  "trunk",
  "primary",
  "secondary",
  "tertiary",
  "unclassified",
  "residential",
  "living_street",
  "service",
  "road",
  "track",
  "motorway_link",
  "trunk_link",
  "primary_link",
  "secondary_link",
  "tertiary_link",
]);

/** `highway` values Streetflow routes on; everything else (construction, platforms, areas…) is skipped. */
const ROUTABLE_HIGHWAYS = new Set([...MOTOR_HIGHWAYS, "pedestrian", "footway", "cycleway", "path", "steps"]);

/** Where bikes and walkers are barred unless the way says otherwise. */
const FAST_ROADS = new Set(["motorway", "motorway_link", "trunk", "trunk_link"]);
/** Ways built for walkers: bikes only with an explicit bicycle=yes/designated. */
const FOOT_WAYS = new Set(["footway", "path", "pedestrian", "steps"]);

/**
 * Speeds when `maxspeed` is absent or unreadable: typical free-flow car speeds
 * on motor roads, the natural travel speed on walking and cycling ways.
 */
const DEFAULT_SPEED_KPH: Record<string, number> = {
  motorway: 110,
  trunk: 90,
  primary: 65,
  secondary: 55,
  tertiary: 45,
  unclassified: 40,
  residential: 30,
  living_street: 10,
  service: 20,
  road: 40,
  track: 20,
  motorway_link: 60,
  trunk_link: 50,
  primary_link: 45,
  secondary_link: 40,
  tertiary_link: 35,
  pedestrian: 5,
  footway: 5,
  cycleway: 18,
  path: 10,
  steps: 3,
};

const MPH = 1.609344;
const WALK_KPH = 5;
/** Stand-in for "no limit" (German Autobahn): a realistic free-flow speed, not infinity. */
const UNLIMITED_KPH = 130;

/** Implicit limits named by zone codes (`DE:urban`, `FR:rural`…); keys are the part after the colon. */
const ZONE_SPEED_KPH: Record<string, number> = {
  urban: 50,
  rural: 90,
  motorway: 130,
  trunk: 100,
  living_street: 10,
  walk: WALK_KPH,
  bicycle_road: 30,
  school: 30,
  nsl_single: 60 * MPH,
  nsl_dual: 70 * MPH,
  nsl_restricted: 30 * MPH,
};
/** Countries whose rural limit differs from the common 90 km/h. */
const RURAL_SPEED_KPH: Record<string, number> = { de: 100, at: 100, fr: 80, gb: 60 * MPH, uk: 60 * MPH };

export function isRoutableWay(tags: Tags): boolean {
  const highway = tags.highway;
  if (highway === undefined || !ROUTABLE_HIGHWAYS.has(highway)) return false;
  return tags.area !== "yes";
}

export function roadClassOf(highway: string): RoadClass {
  return highway.endsWith("_link") ? "ramp" : (highway as RoadClass);
}

export function roadTypeOf(highway: string): RoadType {
  if (highway.endsWith("_link")) return "Ramp";
  if (highway === "motorway" || highway === "trunk" || highway === "primary") return "Primary";
  if (highway === "secondary" || highway === "tertiary") return "Secondary";
  return "Local";
}

/** Travel direction relative to the way's node order. */
export type Oneway = "both" | "forward" | "reverse";

export function onewayOf(tags: Tags): Oneway {
  const value = tags.oneway?.toLowerCase();
  if (value === "yes" || value === "true" || value === "1") return "forward";
  if (value === "-1" || value === "reverse") return "reverse";
  if (value === "no" || value === "false" || value === "0") return "both";
  const junction = tags.junction;
  if (tags.highway === "motorway" || junction === "roundabout" || junction === "circular") return "forward";
  return "both";
}

/** km/h from a `maxspeed` value, or null when it names no usable limit ("signals", "variable", garbage). */
export function parseMaxspeed(value: string | undefined): number | null {
  if (value === undefined) return null;
  // Several limits ("50;30") or conditional parts: the first one is the everyday limit.
  const first = value.split(";")[0].trim().toLowerCase();
  const numeric = /^(\d+(?:\.\d+)?)\s*(mph|km\/h|kmh|kph)?$/.exec(first);
  if (numeric) {
    const n = Number(numeric[1]);
    if (n <= 0) return null;
    return numeric[2] === "mph" ? n * MPH : n;
  }
  if (first === "walk") return WALK_KPH;
  if (first === "none") return UNLIMITED_KPH;
  return zoneSpeed(first);
}

/** `DE:urban`, `FR:rural`, `DE:zone30`, `DE:zone:30`, `GB:nsl_single`… */
function zoneSpeed(code: string): number | null {
  const match = /^([a-z]{2}):(.+)$/.exec(code);
  if (!match) return null;
  const [, country, kind] = match;
  const zone = /^zone:?(\d+)$/.exec(kind);
  if (zone) return Number(zone[1]);
  if (kind === "rural") return RURAL_SPEED_KPH[country] ?? ZONE_SPEED_KPH.rural;
  return ZONE_SPEED_KPH[kind] ?? null;
}

export function speedOf(tags: Tags): number {
  return parseMaxspeed(tags.maxspeed) ?? DEFAULT_SPEED_KPH[tags.highway] ?? 30;
}

export function nameOf(tags: Tags): string | null {
  return tags.name || tags.ref || null;
}

/** Values of access keys that bar the mode; `private`, `destination`, `delivery` still let it travel. */
const DENYING = new Set([
  "no",
  "agricultural",
  "forestry",
  "emergency",
  "military",
  "psv",
  "bus",
  "use_sidepath",
]);
const GRANTING = new Set([
  "yes",
  "designated",
  "permissive",
  "destination",
  "private",
  "customers",
  "delivery",
]);

/**
 * The most specific access key present decides (`motorcar` over `motor_vehicle`
 * over `vehicle` over `access`): true/false for an explicit grant/denial, null
 * when no key speaks for the mode.
 */
function explicitAccess(tags: Tags, keys: readonly string[]): boolean | null {
  for (const key of keys) {
    const value = tags[key]?.toLowerCase();
    if (value === undefined) continue;
    if (DENYING.has(value)) return false;
    if (GRANTING.has(value)) return true;
  }
  return null;
}

const CAR_KEYS = ["motorcar", "motor_vehicle", "vehicle", "access"] as const;
const BIKE_KEYS = ["bicycle", "vehicle", "access"] as const;
const FOOT_KEYS = ["foot", "access"] as const;

export function accessOf(tags: Tags): number {
  const highway = tags.highway;
  let access = 0;
  if (MOTOR_HIGHWAYS.has(highway) && explicitAccess(tags, CAR_KEYS) !== false) access |= ACCESS_CAR;
  if (bikeAllowed(highway, tags)) access |= ACCESS_BIKE;
  if (footAllowed(highway, tags)) access |= ACCESS_FOOT;
  return access;
}

function bikeAllowed(highway: string, tags: Tags): boolean {
  if (highway === "motorway" || highway === "motorway_link") return false;
  // On trunks and walking ways only an explicit grant on the bicycle key counts, not a general access=yes.
  if (FAST_ROADS.has(highway) || FOOT_WAYS.has(highway)) return grants(tags.bicycle);
  return explicitAccess(tags, BIKE_KEYS) !== false;
}

function footAllowed(highway: string, tags: Tags): boolean {
  if (FAST_ROADS.has(highway)) return highway.startsWith("trunk") && grants(tags.foot);
  return explicitAccess(tags, FOOT_KEYS) !== false;
}

function grants(value: string | undefined): boolean {
  const v = value?.toLowerCase();
  return v === "yes" || v === "designated" || v === "permissive";
}
