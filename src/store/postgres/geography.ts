import { NameTakenError } from "../../app/ports/store.js";
import type { Segment, TransitRoute } from "../../engine/network/types.js";
import { packCoords, unpackCoords } from "../packed-coords.js";
import type { NetworkImportInfo, PresetArea, StoredZoneSet, ZoneSetSummary } from "../../domain/records.js";
import type { NetworkRepo, PresetAreaRepo, ZoneSetRepo } from "../../app/ports/store.js";
import { zoneSetBboxJson } from "../sqlite/zone-set-bbox.js";
import { isUniqueViolation, type PgDb } from "./db.js";
import {
  toPresetArea,
  toSegment,
  toZoneSetSummary,
  type PresetAreaRow,
  type SegmentRow,
  type ZoneSetRow,
} from "../rows.js";

const key = (s: string) => s.trim().toLowerCase();

/** Rows per multi-row INSERT: few round trips, well under the 65,535 parameters of one statement. */
const BATCH_ROWS = 1000;

/** Inserts `rows` (arrays of equal length) into `table (columns)` in batches. */
export async function insertRows(db: PgDb, table: string, columns: string[], rows: Iterable<unknown[]>) {
  let batch: unknown[][] = [];
  let count = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const tuples = batch.map(
      (_, r) => `(${columns.map((__, c) => `$${r * columns.length + c + 1}`).join(", ")})`,
    );
    await db.run(`INSERT INTO ${table} (${columns.join(", ")}) VALUES ${tuples.join(", ")}`, batch.flat());
    batch = [];
  };
  for (const row of rows) {
    batch.push(row);
    count++;
    if (batch.length === BATCH_ROWS) await flush();
  }
  await flush();
  return count;
}

export class PostgresNetwork implements NetworkRepo {
  constructor(private readonly db: PgDb) {}

  async replaceCountry(info: NetworkImportInfo, segments: Iterable<Segment>): Promise<void> {
    const columns = [
      "country",
      "id",
      "way_id",
      "piece",
      "road_class",
      "highway",
      "road_type",
      "oneway",
      "speed_kph",
      "name",
      "length_m",
      "from_node",
      "to_node",
      "access",
      "coords",
    ];
    const rows = function* () {
      for (const s of segments)
        yield [
          info.country,
          s.id,
          s.wayId,
          s.index,
          s.roadClass,
          s.highway,
          s.roadType,
          s.oneway,
          s.speedKph,
          s.name,
          s.lengthM,
          s.fromNode,
          s.toNode,
          s.access,
          packCoords(s.coords),
        ];
    };
    await this.db.transaction(async () => {
      await this.db.run("DELETE FROM segments WHERE country = $1", [info.country]);
      const count = await insertRows(this.db, "segments", columns, rows());
      await this.db.run(
        `INSERT INTO network_imports (country, source, segment_count, imported_at, time_zone)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (country) DO UPDATE SET source = excluded.source, segment_count = excluded.segment_count,
         imported_at = excluded.imported_at, time_zone = excluded.time_zone`,
        [info.country, info.source, count, info.importedAt, info.timeZone ?? null],
      );
    });
  }

  async loadSegments(country: string): Promise<Segment[]> {
    const rows = await this.db.rows<SegmentRow>("SELECT * FROM segments WHERE country = $1 ORDER BY id", [
      country,
    ]);
    return rows.map(toSegment);
  }

  async countries(): Promise<NetworkImportInfo[]> {
    const rows = await this.db.rows<{
      country: string;
      source: string;
      segment_count: number;
      imported_at: string;
      time_zone: string | null;
    }>("SELECT country, source, segment_count, imported_at, time_zone FROM network_imports ORDER BY country");
    return rows.map((r) => ({
      country: r.country,
      source: r.source,
      segmentCount: r.segment_count,
      importedAt: r.imported_at,
      timeZone: r.time_zone,
    }));
  }

  async replaceTransit(country: string, routes: readonly TransitRoute[]): Promise<void> {
    const columns = ["country", "kind", "osm_id", "service", "name", "ref", "way_ids", "coords"];
    await this.db.transaction(async () => {
      await this.db.run("DELETE FROM transit_routes WHERE country = $1", [country]);
      await insertRows(
        this.db,
        "transit_routes",
        columns,
        routes.map((r) => [
          country,
          r.kind,
          r.osmId,
          r.service,
          r.name,
          r.ref,
          JSON.stringify(r.wayIds),
          packCoords(r.coords),
        ]),
      );
    });
  }

  async loadTransit(country: string): Promise<TransitRoute[]> {
    const rows = await this.db.rows<{
      kind: TransitRoute["kind"];
      osm_id: number;
      service: string;
      name: string | null;
      ref: string | null;
      way_ids: string;
      coords: Buffer;
    }>(
      `SELECT kind, osm_id, service, name, ref, way_ids, coords FROM transit_routes
       WHERE country = $1 ORDER BY kind = 'bus', osm_id`,
      [country],
    );
    return rows.map((r) => ({
      kind: r.kind,
      osmId: r.osm_id,
      service: r.service,
      name: r.name,
      ref: r.ref,
      wayIds: JSON.parse(r.way_ids) as number[],
      coords: unpackCoords(r.coords),
    }));
  }
}

export class PostgresPresetAreas implements PresetAreaRepo {
  constructor(private readonly db: PgDb) {}

  async replaceCountry(country: string, areas: readonly PresetArea[]): Promise<void> {
    // Later areas of the same key replace earlier ones, as SQLite's INSERT OR REPLACE does.
    const unique = new Map(areas.map((a) => [`${a.geographyType}\u0000${a.areaId}`, a]));
    await this.db.transaction(async () => {
      await this.db.run("DELETE FROM preset_areas WHERE country = $1", [country]);
      await insertRows(
        this.db,
        "preset_areas",
        ["country", "geography_type", "area_id", "osm_id", "name", "geometry"],
        [...unique.values()].map((a) => [
          country,
          a.geographyType,
          a.areaId,
          a.osmId,
          a.name,
          JSON.stringify(a.geometry),
        ]),
      );
    });
  }

  async types(country: string): Promise<{ geographyType: string; areas: number }[]> {
    const rows = await this.db.rows<{ geography_type: string; areas: number }>(
      `SELECT geography_type, COUNT(*) AS areas FROM preset_areas WHERE country = $1
       GROUP BY geography_type ORDER BY geography_type`,
      [country],
    );
    return rows.map((r) => ({ geographyType: r.geography_type, areas: r.areas }));
  }

  async list(country: string, geographyType: string): Promise<PresetArea[]> {
    const rows = await this.db.rows<PresetAreaRow>(
      "SELECT * FROM preset_areas WHERE country = $1 AND geography_type = $2 ORDER BY area_id",
      [country, geographyType],
    );
    return rows.map(toPresetArea);
  }
}

export class PostgresZoneSets implements ZoneSetRepo {
  constructor(private readonly db: PgDb) {}

  async create(z: StoredZoneSet): Promise<void> {
    try {
      await this.db.run(
        `INSERT INTO zone_sets (uuid, org_id, name, name_key, geom_type, with_calibration, zone_count, created_at,
           features, bbox) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          z.uuid,
          z.orgId,
          z.name,
          key(z.name),
          z.geomType,
          z.withCalibration,
          z.zoneCount,
          z.createdAt,
          JSON.stringify(z.featureCollection),
          zoneSetBboxJson(z.featureCollection),
        ],
      );
    } catch (e) {
      if (isUniqueViolation(e)) throw new NameTakenError("zone_set", z.name);
      throw e;
    }
  }

  async createMany(zoneSets: StoredZoneSet[]): Promise<void> {
    await this.db.transaction(async () => {
      for (const z of zoneSets) await this.create(z);
    });
  }

  async get(orgId: string, nameOrUuid: string): Promise<StoredZoneSet | null> {
    const row = await this.db.row<ZoneSetRow>(
      `SELECT * FROM zone_sets WHERE org_id = $1 AND (uuid = $2 OR name_key = $3)
       ORDER BY uuid = $2 DESC LIMIT 1`,
      [orgId, nameOrUuid, key(nameOrUuid)],
    );
    return row ? { ...toZoneSetSummary(row), featureCollection: JSON.parse(row.features!) } : null;
  }

  async list(orgId: string): Promise<ZoneSetSummary[]> {
    const rows = await this.db.rows<ZoneSetRow>(
      `SELECT uuid, org_id, name, geom_type, with_calibration, zone_count, created_at, bbox FROM zone_sets
       WHERE org_id = $1 ORDER BY created_at, name`,
      [orgId],
    );
    return rows.map(toZoneSetSummary);
  }

  async delete(orgId: string, nameOrUuid: string): Promise<boolean> {
    const found = await this.get(orgId, nameOrUuid);
    if (!found) return false;
    return (await this.db.run("DELETE FROM zone_sets WHERE uuid = $1", [found.uuid])) === 1;
  }
}
