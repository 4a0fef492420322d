import { randomUUID } from "node:crypto";
import type { NetworkRegistry } from "../engine/network/registry.js";
import type { StoredZoneSet, ZoneFeature, ZoneFeatureCollection } from "./records.js";
import { fail, ValidationError, type Issue } from "./errors.js";
import { checkGeometry, type ZoneKind } from "./zone-geometry.js";
import { zonesFromOsmIds, type FieldReport } from "./zone-osm.js";
import {
  GEOM_TYPE_HINT,
  normaliseZoneProperties,
  parseGeomType,
  type ZoneProperties,
} from "./zone-properties.js";
import { charCount } from "./text-length.js";

/** Zones per set: the vendor's limit for one upload; larger files are split (CLI `zones upload`). */
export const MAX_ZONES_PER_SET = 7_000;
/** Same limit as zone and analysis names. */
export const MAX_ZONE_SET_NAME_LENGTH = 50;
/** A body with thousands of faulty zones gets the first problems, not a megabyte of them. */
export const MAX_REPORTED_ISSUES = 100;

/** What checking a zone-set body reads besides the body: the road networks OSM way ids resolve on. */
export interface ZoneSetChecks {
  networks: NetworkRegistry;
  /** The imported countries (codes), searched for the ways of `osm_ids`. */
  countries: string[];
  /** Overrides MAX_ZONES_PER_SET: the CLI validates a whole file before splitting it. */
  maxZones?: number;
}

/** A validated zone-set request, ready to be stored. */
export interface NormalisedZoneSet {
  /** Trimmed name, or null when omitted (the set is then named after its uuid). */
  name: string | null;
  geomType: ZoneKind;
  withCalibration: boolean;
  featureCollection: ZoneFeatureCollection;
}

/** A stored zone's feature with its properties in normalised form. */
export interface Zone extends ZoneFeature {
  properties: ZoneProperties;
}

class Issues {
  readonly list: Issue[] = [];
  add = (field: string, message: string): void => {
    this.list.push({ field, message });
  };
  throwIfAny(): void {
    if (this.list.length === 0) return;
    const shown = this.list.slice(0, MAX_REPORTED_ISSUES);
    if (this.list.length > shown.length)
      shown.push({ field: "zones", message: `and ${this.list.length - shown.length} more problems` });
    throw new ValidationError(shown);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The caller's login e-mail of a zone-set body (whether it belongs to the organization is the app's check). */
export function requireLoginEmail(body: unknown): string {
  if (!isObject(body)) throw fail("invalid_request", { reason: "the body must be a JSON object" });
  const email = body.insight_login_email;
  if (typeof email !== "string" || email.trim() === "")
    throw new ValidationError([
      {
        field: "insight_login_email",
        message: "insight_login_email is required (the caller's login e-mail)",
      },
    ]);
  return email.trim();
}

/** Whether the body makes its zones from OSM way ids (then the imported countries are needed). */
export const namesOsmIds = (body: unknown): boolean =>
  isObject(body) && body.osm_ids !== undefined && body.osm_ids !== null;

function checkSetName(v: unknown, issues: Issues): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "string" || v.trim() === "") {
    issues.add("zone_set_name", "zone_set_name must be a non-empty string when given");
    return null;
  }
  const name = v.trim();
  if (charCount(name) > MAX_ZONE_SET_NAME_LENGTH)
    issues.add("zone_set_name", `zone_set_name must have at most ${MAX_ZONE_SET_NAME_LENGTH} characters`);
  return name;
}

function checkWithCalibration(v: unknown, issues: Issues): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") issues.add("with_calibration", "with_calibration must be a boolean");
  return v === true;
}

function checkSetGeomType(v: unknown, issues: Issues): ZoneKind | undefined {
  if (v === undefined || v === null) return undefined;
  const kind = parseGeomType(v);
  if (!kind) issues.add("geom_type", `geom_type ${GEOM_TYPE_HINT}`);
  return kind;
}

/** The features and the path prefix of `zones`: a FeatureCollection, or a bare array of features. */
function featuresOf(zones: unknown, issues: Issues): { features: unknown[]; prefix: string } | null {
  if (Array.isArray(zones)) return { features: zones, prefix: "zones" };
  if (isObject(zones) && zones.type === "FeatureCollection" && Array.isArray(zones.features))
    return { features: zones.features, prefix: "zones.features" };
  issues.add("zones", "zones must be a GeoJSON FeatureCollection or an array of Features");
  return null;
}

function zoneLabel(properties: unknown, index: number): string {
  const name = isObject(properties) ? properties.name : undefined;
  return typeof name === "string" && name.trim() !== ""
    ? `zone "${name.trim()}" (#${index})`
    : `zone #${index}`;
}

interface FeatureScope {
  setKind: ZoneKind | undefined;
  withCalibration: boolean;
  names: Map<string, number>;
  ids: Map<number, number>;
}

/** Validates one feature; returns its normalised form, or null when it has problems. */
function checkFeature(feature: unknown, index: number, prefix: string, scope: FeatureScope, issues: Issues) {
  const at = `${prefix}[${index}]`;
  if (!isObject(feature)) {
    issues.add(at, `zone #${index}: must be a GeoJSON Feature object`);
    return null;
  }
  const label = zoneLabel(feature.properties, index);
  const report = (field: string, message: string) => issues.add(`${at}.${field}`, `${label}: ${message}`);
  const before = issues.list.length;
  if (feature.type !== undefined && feature.type !== "Feature") report("type", 'type must be "Feature"');
  const geometry = checkGeometry(feature.geometry);
  if (!geometry.ok) report("geometry", geometry.problem);
  if (geometry.ok && scope.setKind && geometry.kind !== scope.setKind)
    report("geometry.type", `a ${geometry.kind} zone cannot join a set of ${scope.setKind} zones`);
  if (!isObject(feature.properties)) {
    report("properties", "properties must be an object with at least a name");
    return null;
  }
  const kind = geometry.ok ? geometry.kind : (scope.setKind ?? "polygon");
  const props = normaliseZoneProperties(
    feature.properties,
    { kind, withCalibration: scope.withCalibration },
    (property, message) => report(`properties.${property}`, message),
  );
  checkUnique(props, index, scope, report);
  if (issues.list.length > before || !geometry.ok) return null;
  return { type: "Feature" as const, geometry: geometry.geometry, properties: props };
}

function checkUnique(props: ZoneProperties, index: number, scope: FeatureScope, report: FieldReport) {
  const nameKey = props.name.toLowerCase();
  const sameName = scope.names.get(nameKey);
  if (props.name !== "" && sameName !== undefined)
    report(
      "properties.name",
      `name is already used by zone #${sameName} (names are unique, case-insensitive)`,
    );
  else scope.names.set(nameKey, index);
  if (props.id === null) return;
  const sameId = scope.ids.get(props.id);
  if (sameId !== undefined) report("properties.id", `id ${props.id} is already used by zone #${sameId}`);
  else scope.ids.set(props.id, index);
}

/** The set's kind: as declared, else that of its first zone with a valid geometry. */
function setKindOf(declared: ZoneKind | undefined, features: unknown[]): ZoneKind | undefined {
  if (declared) return declared;
  for (const f of features) {
    const g = isObject(f) ? checkGeometry(f.geometry) : null;
    if (g?.ok) return g.kind;
  }
  return undefined;
}

function checkFeatures(
  features: unknown[],
  prefix: string,
  declaredKind: ZoneKind | undefined,
  withCalibration: boolean,
  maxZones: number,
  issues: Issues,
): { kind: ZoneKind; zones: Zone[] } {
  if (features.length === 0) issues.add(prefix, "a zone set needs at least one zone");
  if (features.length > maxZones) {
    issues.add(prefix, `a zone set holds at most ${maxZones} zones (got ${features.length}); split the file`);
    return { kind: declaredKind ?? "polygon", zones: [] };
  }
  const kind = setKindOf(declaredKind, features) ?? "polygon";
  const scope: FeatureScope = { setKind: kind, withCalibration, names: new Map(), ids: new Map() };
  const zones: Zone[] = [];
  features.forEach((f, i) => {
    const zone = checkFeature(f, i, prefix, scope, issues);
    if (zone) zones.push(zone);
  });
  return { kind, zones };
}

async function zoneSource(body: Record<string, unknown>, ctx: ZoneSetChecks, issues: Issues) {
  const hasZones = body.zones !== undefined && body.zones !== null;
  const hasOsmIds = body.osm_ids !== undefined && body.osm_ids !== null;
  const maxZones = ctx.maxZones ?? MAX_ZONES_PER_SET;
  if (hasZones && hasOsmIds) {
    issues.add("osm_ids", "give either zones or osm_ids, not both");
    return null;
  }
  if (hasOsmIds) {
    const features = await zonesFromOsmIds(body.osm_ids, ctx.networks, ctx.countries, maxZones, issues.add);
    return issues.list.length > 0 ? null : { features, prefix: "zones" };
  }
  if (!hasZones) {
    issues.add("zones", "zones (a GeoJSON FeatureCollection) or osm_ids is required");
    return null;
  }
  return featuresOf(body.zones, issues);
}

/**
 * Checks a POST /zone_sets body (or a file read by the CLI) against every rule of the spec, collecting all
 * problems into one ValidationError. The caller has checked the login first (requireLoginEmail and its
 * membership: app/zone-sets.ts).
 */
export async function checkZoneSetRequest(body: unknown, ctx: ZoneSetChecks): Promise<NormalisedZoneSet> {
  if (!isObject(body)) throw fail("invalid_request", { reason: "the body must be a JSON object" });
  const issues = new Issues();
  const name = checkSetName(body.zone_set_name, issues);
  const withCalibration = checkWithCalibration(body.with_calibration, issues);
  const declaredKind = checkSetGeomType(body.geom_type, issues);
  const source = await zoneSource(body, ctx, issues);
  const maxZones = ctx.maxZones ?? MAX_ZONES_PER_SET;
  const checked = source
    ? checkFeatures(source.features, source.prefix, declaredKind, withCalibration, maxZones, issues)
    : null;
  issues.throwIfAny();
  return {
    name,
    geomType: checked!.kind,
    withCalibration,
    featureCollection: { type: "FeatureCollection", features: checked!.zones },
  };
}

/** A stored zone set from a validated request; unnamed sets are named after their uuid. */
export function toStoredZoneSet(orgId: string, set: NormalisedZoneSet, now = new Date()): StoredZoneSet {
  const uuid = randomUUID();
  return {
    uuid,
    orgId,
    name: set.name ?? uuid,
    geomType: set.geomType,
    withCalibration: set.withCalibration,
    zoneCount: set.featureCollection.features.length,
    createdAt: now.toISOString(),
    featureCollection: set.featureCollection,
  };
}

/** The zones of a stored set with their normalised properties: what analyses read. */
export function zonesOf(set: StoredZoneSet): Zone[] {
  return set.featureCollection.features as Zone[];
}
