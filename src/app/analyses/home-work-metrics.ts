import type { AnalysisSpec } from "../../domain/analyses/spec.js";
import { vendorOptionsOf } from "../../domain/analyses/vendor-options.js";
import type { PresetArea, ZoneFeature } from "../../domain/records.js";
import { toCsv, type CsvValue } from "../../engine/analysis/csv.js";
import { DeviceTripLog, type HomeWork } from "../../engine/analysis/home-work.js";
import {
  HomeWorkTally,
  TRAVELER_TYPES,
  type HomeWorkRow,
  type Locate,
  type TravelerType,
} from "../../engine/analysis/home-work-tally.js";
import { gridCellOf } from "../../engine/analysis/location-grid.js";
import type { ObservedTrip, OdTrip } from "../../engine/analysis/od-aggregate.js";
import type { ZoneDef } from "../../engine/zones/compile.js";
import { bboxOfPoints, pointInMultiPolygon, type PolygonRings } from "../../engine/zones/geometry.js";
import type { LonLat } from "../../engine/network/types.js";
import { LocalClock, localMs } from "../../engine/time.js";
import { networkTimeZone } from "../networks.js";
import type { ComputeContext, MetricCsvs } from "./compute.js";
import { COMMERCIAL, groupNames, modeOf, ZONE_ROW_COLUMNS, ALL } from "./od-metrics.js";

export const HOME_WORK_GRID_COLUMNS = [
  ...ZONE_ROW_COLUMNS,
  "traveler_type",
  "grid_id",
  "grid_west",
  "grid_south",
  "grid_east",
  "grid_north",
  "trip_share",
];
export const HOME_WORK_AREA_COLUMNS = [
  ...ZONE_ROW_COLUMNS,
  "traveler_type",
  "area_id",
  "area_name",
  "trip_share",
];

/** The place key of the places suppressed together (too few devices each). */
const SUPPRESSED = "suppressed";

/**
 * Home and work locations of a Zone_Activity_Analysis: rides along the zone activity scan. Every
 * scanned trip of the analysed days goes to the device log (to infer homes and work places); every
 * trip meeting a zone goes to the tally with its device. Fleet vehicles (medium and heavy commercial)
 * have depots, not homes, and are left out of both.
 */
export class HomeWorkScan {
  private readonly log: DeviceTripLog;
  private readonly tally: HomeWorkTally;

  private constructor(
    private readonly spec: AnalysisSpec,
    private readonly clock: LocalClock,
  ) {
    this.log = new DeviceTripLog((t) => localMs(clock, t));
    this.tally = new HomeWorkTally(spec.dayTypes.length, spec.dayParts.length);
  }

  /** The scan when the analysis asks for home and work locations, else null. */
  static async of(spec: AnalysisSpec, ctx: ComputeContext): Promise<HomeWorkScan | null> {
    if (!vendorOptionsOf(spec).homeWorkLocations.enabled) return null;
    return new HomeWorkScan(spec, LocalClock.of(await networkTimeZone(ctx.store, spec.country)));
  }

  readonly everyTrip = (trip: OdTrip): void => {
    if (!trip.device || trip.groups.includes(COMMERCIAL)) return;
    const day = this.clock.at(trip.startT).day;
    if (!this.spec.dateRanges.some((r) => r.startDay <= day && day <= r.endDay)) return;
    this.log.add(this.log.deviceNumber(trip.device), trip.startT, trip.endT, trip.origin, trip.destination);
  };

  readonly watch = (seen: ObservedTrip): void => {
    const { trip } = seen;
    if (!trip.device || trip.groups.includes(COMMERCIAL)) return;
    const zones = new Set([...seen.origins, ...seen.destinations].map((v) => v.zone));
    this.tally.add(this.log.deviceNumber(trip.device), trip.weight, zones, seen.dayTypes, seen.dayParts);
  };

  /** Each device's inferred places, by stored device id (the ground-truth test scores them). */
  inferredPlaces(): Map<string, HomeWork> {
    const places = this.log.infer();
    return new Map(this.log.deviceIds.map((id, n) => [id, places[n]]));
  }

  /** home_<places>_<suffix> and work_<places>_<suffix>, over the grid or the preset geography. */
  async csvs(ctx: ComputeContext, zones: ZoneDef[], features: ZoneFeature[]): Promise<MetricCsvs> {
    const places = this.log.infer();
    const containers = features.map((f) => polygonsOf(f.geometry));
    const contains = (zone: number, p: LonLat) =>
      containers[zone].length > 0 && pointInMultiPolygon(p, containers[zone]);
    const flags = vendorOptionsOf(this.spec).homeWorkLocations;
    const kinds = TRAVELER_TYPES.filter(
      (k) => ({ Visitor: flags.visitor, Resident: flags.resident, Worker: flags.worker })[k],
    );
    const geography = this.spec.options?.homeWorkGeography;
    const where = geography ? await presetPlaces(ctx, this.spec.country, geography) : gridPlaces();
    const suffix = modeOf(this.spec).suffix;
    const label = geography === "zip" ? "zip_codes" : (geography ?? "grid");
    const out: MetricCsvs = {};
    for (const side of ["home", "work"] as const) {
      const rows = this.tally.rows({ places, contains, kinds, side, locate: where.locate });
      out[`${side}_${label}_${suffix}`] = toCsv(
        where.columns,
        rows.map((r) => this.row(r, zones, where.describe)),
      );
    }
    return out;
  }

  private row(r: HomeWorkRow, zones: ZoneDef[], describe: (key: string) => CsvValue[]): CsvValue[] {
    const z = zones[r.zone];
    return [
      groupNames(this.spec)[ALL],
      z.id,
      z.name,
      z.isPass ? "yes" : "no",
      z.direction === null ? "N/A" : z.direction,
      this.spec.dayTypes[r.dayType].label,
      this.spec.dayParts[r.dayPart].label,
      r.travelerType satisfies TravelerType,
      ...(r.place === null
        ? [
            SUPPRESSED,
            ...describe(SUPPRESSED)
              .slice(1)
              .map(() => null),
          ]
        : describe(r.place)),
      Math.round(r.share * 1000) / 1000,
    ];
  }
}

interface Places {
  columns: string[];
  locate: Locate;
  /** The place's columns: its key, then the bounds of a cell or the name of an area. */
  describe(key: string): CsvValue[];
}

function gridPlaces(): Places {
  const bounds = new Map<string, CsvValue[]>();
  return {
    columns: HOME_WORK_GRID_COLUMNS,
    locate(p) {
      const cell = gridCellOf(p);
      bounds.set(cell.id, cell.bounds);
      return cell.id;
    },
    describe: (key) => [key, ...(bounds.get(key) ?? [null, null, null, null])],
  };
}

async function presetPlaces(ctx: ComputeContext, country: string, geography: string): Promise<Places> {
  const areas = await ctx.store.presetAreas.list(country, geography);
  if (areas.length === 0)
    throw new Error(
      `the preset geography "${geography}" of "${country}" has no areas; import the network again`,
    );
  const indexed = areas.map((a) => {
    const polygons = polygonsOf(a.geometry);
    return { area: a, polygons, bbox: bboxOfPoints(polygons.flatMap((rings) => rings[0])) };
  });
  const byId = new Map<string, PresetArea>(areas.map((a) => [a.areaId, a]));
  return {
    columns: HOME_WORK_AREA_COLUMNS,
    locate(p) {
      const hit = indexed.find(
        ({ bbox: [w, s, e, n], polygons }) =>
          p[0] >= w && p[0] <= e && p[1] >= s && p[1] <= n && pointInMultiPolygon(p, polygons),
      );
      return hit?.area.areaId ?? null;
    },
    describe: (key) => [key, byId.get(key)?.name ?? null],
  };
}

function polygonsOf(geometry: { type: string; coordinates: unknown }): PolygonRings[] {
  if (geometry.type === "Polygon") return [geometry.coordinates as PolygonRings];
  if (geometry.type === "MultiPolygon") return geometry.coordinates as PolygonRings[];
  return [];
}
