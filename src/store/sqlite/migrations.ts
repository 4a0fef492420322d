import type Database from "better-sqlite3";
import type { SegmentStatCell } from "../../engine/counts/segment-stats.js";
import { registerTallyMerges, YearRollups } from "./counts.js";
import { SegmentMonthCounters } from "./segment-month-pack.js";
import { statementCache } from "./statements.js";
import { zoneSetBboxJson } from "./zone-set-bbox.js";

/** SQL to run, or a function for a step SQL cannot express (reshaping data). */
export type Migration = string | ((db: Database.Database) => void);

/**
 * Versioned schema. Each entry runs once, in order, inside a transaction;
 * `PRAGMA user_version` records how far a database has come. Append only:
 * never edit a migration that has shipped.
 */
export const MIGRATIONS: Migration[] = [
  `
  CREATE TABLE organizations (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
  );
  CREATE TABLE users (
    email_key TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE memberships (
    email_key TEXT NOT NULL REFERENCES users(email_key),
    org_id TEXT NOT NULL REFERENCES organizations(id),
    PRIMARY KEY (email_key, org_id)
  );
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    prefix TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    label TEXT,
    created_at TEXT NOT NULL,
    revoked_at TEXT
  );
  CREATE TABLE network_imports (
    country TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    segment_count INTEGER NOT NULL,
    imported_at TEXT NOT NULL
  );
  CREATE TABLE segments (
    country TEXT NOT NULL,
    id INTEGER NOT NULL,
    way_id INTEGER NOT NULL,
    piece INTEGER NOT NULL,
    road_class TEXT NOT NULL,
    highway TEXT NOT NULL,
    road_type TEXT NOT NULL,
    oneway INTEGER NOT NULL,
    speed_kph REAL NOT NULL,
    name TEXT,
    length_m REAL NOT NULL,
    from_node INTEGER NOT NULL,
    to_node INTEGER NOT NULL,
    access INTEGER NOT NULL,
    coords BLOB NOT NULL,
    PRIMARY KEY (country, id)
  ) WITHOUT ROWID;
  CREATE TABLE zone_sets (
    uuid TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    geom_type TEXT NOT NULL,
    with_calibration INTEGER NOT NULL,
    zone_count INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    features TEXT NOT NULL,
    UNIQUE (org_id, name_key)
  );
  CREATE TABLE trip_day_counts (
    country TEXT NOT NULL,
    day TEXT NOT NULL,
    vehicle_class TEXT NOT NULL,
    source TEXT NOT NULL,
    trips INTEGER NOT NULL,
    devices INTEGER NOT NULL,
    PRIMARY KEY (country, day, vehicle_class, source)
  );
  `,
  `
  CREATE TABLE segment_stats (
    country TEXT NOT NULL,
    segment_id INTEGER NOT NULL,
    month TEXT NOT NULL,
    day_of_week INTEGER NOT NULL,
    hour INTEGER NOT NULL,
    direction TEXT NOT NULL,
    vehicle_class TEXT NOT NULL,
    source TEXT NOT NULL,
    trips INTEGER NOT NULL,
    speed_sum_kph REAL NOT NULL,
    speed_count INTEGER NOT NULL,
    speed_histogram TEXT NOT NULL,
    purposes TEXT NOT NULL,
    incomes TEXT NOT NULL,
    PRIMARY KEY (country, segment_id, month, day_of_week, hour, direction, vehicle_class, source)
  ) WITHOUT ROWID;
  CREATE TABLE counts_results (
    request_id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    columns TEXT NOT NULL,
    extra TEXT NOT NULL,
    page_size INTEGER NOT NULL,
    total_rows INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
  );
  CREATE INDEX counts_results_expiry ON counts_results (expires_at);
  CREATE TABLE counts_result_pages (
    request_id TEXT NOT NULL REFERENCES counts_results(request_id) ON DELETE CASCADE,
    page INTEGER NOT NULL,
    rows TEXT NOT NULL,
    PRIMARY KEY (request_id, page)
  );
  CREATE TABLE counts_usage (
    id INTEGER PRIMARY KEY,
    key_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    at TEXT NOT NULL,
    segments INTEGER NOT NULL,
    fields INTEGER NOT NULL,
    units INTEGER NOT NULL
  );
  CREATE INDEX counts_usage_key ON counts_usage (key_id, at);
  CREATE INDEX counts_usage_org ON counts_usage (org_id, at);
  ALTER TABLE api_keys ADD COLUMN counts_quota_units INTEGER;
  `,
  `
  CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    failure_reason TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX jobs_claimable ON jobs (state, seq);
  CREATE TABLE analyses (
    uuid TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    name_lookup TEXT NOT NULL,
    name_key TEXT,
    spec TEXT NOT NULL,
    state TEXT NOT NULL,
    failure_reason TEXT,
    metrics TEXT NOT NULL DEFAULT '[]',
    progress REAL NOT NULL DEFAULT 0,
    job_id TEXT,
    created_at TEXT NOT NULL,
    started_at TEXT,
    finished_at TEXT,
    UNIQUE (org_id, name_key)
  );
  CREATE INDEX analyses_by_name ON analyses (org_id, name_lookup);
  CREATE TABLE analysis_results (
    analysis_uuid TEXT NOT NULL REFERENCES analyses(uuid),
    metric TEXT NOT NULL,
    csv TEXT NOT NULL,
    PRIMARY KEY (analysis_uuid, metric)
  );
  `,
  // Trip store: column chunks per (country, month of start), dedupe fingerprints, devices seen per day.
  `
  CREATE TABLE trip_chunks (
    id INTEGER PRIMARY KEY,
    country TEXT NOT NULL,
    month TEXT NOT NULL,
    format INTEGER NOT NULL,
    trip_count INTEGER NOT NULL,
    step_count INTEGER NOT NULL,
    class_mask INTEGER NOT NULL,
    devices TEXT NOT NULL,
    columns BLOB NOT NULL
  );
  CREATE INDEX trip_chunks_partition ON trip_chunks (country, month, id);
  CREATE TABLE trip_fingerprints (
    country TEXT NOT NULL,
    fingerprint BLOB NOT NULL,
    PRIMARY KEY (country, fingerprint)
  ) WITHOUT ROWID;
  CREATE TABLE trip_device_days (
    country TEXT NOT NULL,
    day TEXT NOT NULL,
    vehicle_class TEXT NOT NULL,
    source TEXT NOT NULL,
    device_key BLOB NOT NULL,
    PRIMARY KEY (country, day, vehicle_class, source, device_key)
  ) WITHOUT ROWID;
  CREATE TABLE ingest_runs (
    id INTEGER PRIMARY KEY,
    country TEXT NOT NULL,
    source TEXT NOT NULL,
    path TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    counts TEXT NOT NULL
  );
  `,
  // Segment counts: the totals query reads only this covering index, not the rows with their JSON details.
  `
  CREATE INDEX segment_stats_totals ON segment_stats
    (country, segment_id, month, day_of_week, hour, direction, vehicle_class, source, trips, speed_sum_kph, speed_count);
  `,
  // The network's local time zone, chosen at import (NULL: the built-in country table decides).
  `
  ALTER TABLE network_imports ADD COLUMN time_zone TEXT;
  `,
  packSegmentStats,
  // Preset geographies: administrative and postal-code boundaries imported with a network.
  `
  CREATE TABLE preset_areas (
    country TEXT NOT NULL,
    geography_type TEXT NOT NULL,
    area_id TEXT NOT NULL,
    osm_id INTEGER NOT NULL,
    name TEXT,
    geometry TEXT NOT NULL,
    PRIMARY KEY (country, geography_type, area_id)
  );
  `,
  vendorAnalysisFeatures,
  // The transit layer of an import: rail lines (with their geometry) and bus routes (ways they run on).
  `
  CREATE TABLE transit_routes (
    country TEXT NOT NULL,
    kind TEXT NOT NULL,
    osm_id INTEGER NOT NULL,
    service TEXT NOT NULL,
    name TEXT,
    ref TEXT,
    way_ids TEXT NOT NULL,
    coords BLOB NOT NULL,
    PRIMARY KEY (country, kind, osm_id)
  );
  `,
  // Accounts and web security: passwords, roles per membership, sessions, lockouts, reset links, audit log,
  // per-key rate limits. Existing members become admins: before roles, every member could do everything.
  `
  ALTER TABLE users ADD COLUMN password_hash TEXT;
  ALTER TABLE users ADD COLUMN disabled_at TEXT;
  ALTER TABLE memberships ADD COLUMN role TEXT NOT NULL DEFAULT 'admin';
  ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute INTEGER;
  ALTER TABLE api_keys ADD COLUMN kind TEXT NOT NULL DEFAULT 'api';
  CREATE TABLE sessions (
    id_hash TEXT PRIMARY KEY,
    email_key TEXT NOT NULL REFERENCES users(email_key),
    org_id TEXT NOT NULL REFERENCES organizations(id),
    csrf_token TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_seen_at TEXT NOT NULL
  );
  CREATE INDEX sessions_user ON sessions (email_key);
  CREATE TABLE login_failures (
    subject TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    last_failure_at TEXT NOT NULL,
    locked_until TEXT
  );
  CREATE TABLE password_resets (
    token_hash TEXT PRIMARY KEY,
    email_key TEXT NOT NULL REFERENCES users(email_key),
    expires_at TEXT NOT NULL,
    used_at TEXT
  );
  CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY,
    org_id TEXT NOT NULL,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT
  );
  CREATE INDEX audit_log_org ON audit_log (org_id, id);
  `,
  addZoneSetBbox,
  addSegmentYearRollups,
  // Chunks of distributed ingests (issue 15): input until done, then the done marker and its result.
  `CREATE TABLE ingest_chunks (
    ingest_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'queued',
    input BLOB,
    result TEXT,
    failure TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (ingest_id, seq)
  );`,
  // Devices per UTC month, the expansion factors' input: counting them from trip_device_days sorted every
  // device-day of the month on each analysis (0.35 s CPU of a 1 M-trip OD analysis, issue 16).
  `CREATE TABLE trip_device_months (
    country TEXT NOT NULL,
    month TEXT NOT NULL,
    device_key BLOB NOT NULL,
    PRIMARY KEY (country, month, device_key)
  ) WITHOUT ROWID;
  INSERT OR IGNORE INTO trip_device_months (country, month, device_key)
    SELECT country, substr(day, 1, 7), device_key FROM trip_device_days;`,
  // Renamed to match PostgreSQL's table, which meanwhile took this first name: so back in 17, one name in both.
  "ALTER TABLE trip_device_months RENAME TO trip_month_devices;",
  "ALTER TABLE trip_month_devices RENAME TO trip_device_months;",
  // Pieces of analysis CSVs stored while the analysis runs (AnalysisRepo.putResultPieces): PostgreSQL's
  // sharded analyses write them; the single process never does, but the port is the same.
  `CREATE TABLE analysis_result_pieces (
    analysis_uuid TEXT NOT NULL REFERENCES analyses(uuid),
    metric TEXT NOT NULL,
    piece INTEGER NOT NULL,
    csv TEXT NOT NULL,
    PRIMARY KEY (analysis_uuid, metric, piece)
  );`,
  // A version per country that every write of the tallies bumps, so connections keeping rollups in memory
  // know when to drop them (rollup-cache.ts; PostgreSQL's table of the same name).
  `CREATE TABLE segment_counts_versions (
    country TEXT PRIMARY KEY,
    version INTEGER NOT NULL
  );`,
  // Ingest batches store their segment-months and segment-years' rollups as parts at levels (counts.ts,
  // "Parts"), so a batch no longer reads and rewrites the whole month or year so far; the rows stored before
  // stand at level 0.
  `${partedTable("segment_month_totals", "month")}${partedTable("segment_month_details", "month")}
  ${partedTable("segment_year_rollups", "year")}
  CREATE TABLE segment_month_batches (
    country TEXT NOT NULL,
    month TEXT NOT NULL,
    batches INTEGER NOT NULL,
    compacted INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (country, month)
  ) WITHOUT ROWID;`,
  // Totals parts carry the rollup entries of what they hold until compaction adds them to the year's rollup
  // (counts.ts, "Parts"); the rows stored before hold none, as their entries are in the year's rollup already.
  // The column goes before the cells, so reading it does not read the cells' overflow pages.
  `CREATE TABLE segment_month_totals_rollups (
    country TEXT NOT NULL,
    segment_id INTEGER NOT NULL,
    month TEXT NOT NULL,
    level INTEGER NOT NULL DEFAULT 0,
    rollup BLOB,
    cells BLOB NOT NULL,
    PRIMARY KEY (country, segment_id, month, level)
  );
  INSERT INTO segment_month_totals_rollups (country, segment_id, month, level, cells)
    SELECT country, segment_id, month, level, cells FROM segment_month_totals
    ORDER BY country, segment_id, month, level;
  DROP TABLE segment_month_totals;
  ALTER TABLE segment_month_totals_rollups RENAME TO segment_month_totals;`,
];

/** A packed table rebuilt with a level in its key, its rows kept at level 0 (a rowid table, as before). */
function partedTable(name: string, period: "month" | "year"): string {
  return `
  CREATE TABLE ${name}_parted (
    country TEXT NOT NULL,
    segment_id INTEGER NOT NULL,
    ${period} TEXT NOT NULL,
    level INTEGER NOT NULL DEFAULT 0,
    cells BLOB NOT NULL,
    PRIMARY KEY (country, segment_id, ${period}, level)
  );
  INSERT INTO ${name}_parted (country, segment_id, ${period}, level, cells)
    SELECT country, segment_id, ${period}, 0, cells FROM ${name} ORDER BY country, segment_id, ${period};
  DROP TABLE ${name};
  ALTER TABLE ${name}_parted RENAME TO ${name};`;
}

/**
 * Vendor-client features of analyses: job priority (is_massive_queue), the organization's tags and
 * which analyses carry them (the tags of existing analyses' requests become real tags), and the
 * per-organization completion webhook (enable_completion_email).
 */
function vendorAnalysisFeatures(db: Database.Database): void {
  db.exec(`
  ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
  DROP INDEX jobs_claimable;
  CREATE INDEX jobs_claimable ON jobs (state, priority DESC, seq);
  CREATE TABLE tags (
    id INTEGER PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES organizations(id),
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (org_id, name_key)
  );
  CREATE TABLE analysis_tags (
    analysis_uuid TEXT NOT NULL REFERENCES analyses(uuid),
    tag_id INTEGER NOT NULL REFERENCES tags(id),
    PRIMARY KEY (analysis_uuid, tag_id)
  ) WITHOUT ROWID;
  CREATE INDEX analysis_tags_by_tag ON analysis_tags (tag_id);
  CREATE TABLE completion_webhooks (
    org_id TEXT PRIMARY KEY REFERENCES organizations(id),
    url TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  `);
  const analyses = db.prepare("SELECT uuid, org_id, spec, created_at FROM analyses").all() as {
    uuid: string;
    org_id: string;
    spec: string;
    created_at: string;
  }[];
  const addTag = db.prepare(
    `INSERT INTO tags (org_id, name, name_key, created_by, created_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (org_id, name_key) DO NOTHING`,
  );
  const link = db.prepare(
    `INSERT OR IGNORE INTO analysis_tags (analysis_uuid, tag_id)
     SELECT ?, id FROM tags WHERE org_id = ? AND name_key = ?`,
  );
  for (const a of analyses) {
    const spec = JSON.parse(a.spec) as { tags?: string[]; loginEmail?: string };
    for (const tag of spec.tags ?? []) {
      addTag.run(a.org_id, tag, tag.trim().toLowerCase(), spec.loginEmail ?? "", a.created_at);
      link.run(a.uuid, a.org_id, tag.trim().toLowerCase());
    }
  }
}

interface SegmentStatRow {
  country: string;
  segment_id: number;
  month: string;
  day_of_week: number;
  hour: number;
  direction: "with" | "against";
  vehicle_class: string;
  source: string;
  trips: number;
  speed_sum_kph: number;
  speed_count: number;
  speed_histogram: string;
  purposes: string;
  incomes: string;
}

/**
 * Segment counts move from one row per cell (segment_stats) to one packed row per segment × month
 * (segment-month-pack.ts): the cells are copied over unchanged, a segment at a time, then the
 * per-cell table goes.
 */
function packSegmentStats(db: Database.Database): void {
  // Rowid tables on purpose: the key index stays small and dense, and each row's BLOB is one table
  // lookup away. WITHOUT ROWID would put the BLOBs (kilobytes each) into the key's b-tree, and a
  // 1,000-segment read took 5× longer that way.
  const packedTable = (name: string) => `
  CREATE TABLE ${name} (
    country TEXT NOT NULL,
    segment_id INTEGER NOT NULL,
    month TEXT NOT NULL,
    cells BLOB NOT NULL,
    PRIMARY KEY (country, segment_id, month)
  );`;
  db.exec(packedTable("segment_month_totals") + packedTable("segment_month_details"));
  const segments = db.prepare("SELECT DISTINCT country, segment_id FROM segment_stats").all() as {
    country: string;
    segment_id: number;
  }[];
  const cellsOf = db.prepare(
    `SELECT * FROM segment_stats WHERE country = ? AND segment_id = ?
     ORDER BY month, day_of_week, hour, direction, vehicle_class, source`,
  );
  const put = (table: string) =>
    db.prepare(`INSERT INTO ${table} (country, segment_id, month, cells) VALUES (?, ?, ?, ?)`);
  const [putTotals, putDetails] = [put("segment_month_totals"), put("segment_month_details")];
  for (const { country, segment_id } of segments) {
    const months = new Map<string, SegmentMonthCounters>();
    for (const row of cellsOf.all(country, segment_id) as SegmentStatRow[]) {
      let counters = months.get(row.month);
      if (!counters) months.set(row.month, (counters = new SegmentMonthCounters()));
      counters.add(cellOfRow(row));
    }
    for (const [month, counters] of months) {
      const packed = counters.encode();
      putTotals.run(country, segment_id, month, packed.totals);
      putDetails.run(country, segment_id, month, packed.details);
    }
  }
  db.exec("DROP TABLE segment_stats");
}

function cellOfRow(r: SegmentStatRow): SegmentStatCell {
  return {
    segmentId: r.segment_id,
    month: r.month,
    dayOfWeek: r.day_of_week,
    hour: r.hour,
    direction: r.direction,
    vehicleClass: r.vehicle_class,
    source: r.source,
    trips: r.trips,
    speedSumKph: r.speed_sum_kph,
    speedCount: r.speed_count,
    speedHistogram: JSON.parse(r.speed_histogram),
    purposes: JSON.parse(r.purposes),
    incomes: JSON.parse(r.incomes),
  };
}

/**
 * Whole-month rollups of the packed segment counts (segment-rollups.ts): one small row per
 * segment × year, computed from the month totals. A rowid table, as the packed tables: a year's
 * BLOB can pass a kilobyte, which a WITHOUT ROWID b-tree would move to overflow pages.
 */
function addSegmentYearRollups(db: Database.Database): void {
  db.exec(`
  CREATE TABLE segment_year_rollups (
    country TEXT NOT NULL,
    segment_id INTEGER NOT NULL,
    year TEXT NOT NULL,
    cells BLOB NOT NULL,
    PRIMARY KEY (country, segment_id, year)
  );`);
  // In key order and in batches: the connection runs no other statement while one is iterated.
  const batch = db
    .prepare(
      `SELECT country, segment_id, month, cells FROM segment_month_totals
       WHERE (country, segment_id, month) > (?, ?, ?) ORDER BY country, segment_id, month LIMIT 2000`,
    )
    .raw();
  let after: [string, number, string] = ["", -Infinity, ""];
  registerTallyMerges(db);
  const sql = statementCache(db);
  for (;;) {
    const rows = batch.all(...after) as [string, number, string, Buffer][];
    if (rows.length === 0) return;
    // A segment-year split across batches is rewritten with its later months added.
    let rollups: YearRollups | undefined;
    for (const [country, segmentId, month, totals] of rows) {
      if (rollups?.country !== country) {
        rollups?.writeWhole(sql);
        rollups = new YearRollups(country);
      }
      rollups.set(segmentId, month, totals);
    }
    rollups?.writeWhole(sql);
    const [country, segmentId, month] = rows[rows.length - 1];
    after = [country, segmentId, month];
  }
}

/** Zone sets keep their bounding box (JSON [w, s, e, n]), so lists can show the sets of one network. */
function addZoneSetBbox(db: Database.Database): void {
  db.exec("ALTER TABLE zone_sets ADD COLUMN bbox TEXT");
  const update = db.prepare("UPDATE zone_sets SET bbox = ? WHERE uuid = ?");
  const rows = db.prepare("SELECT uuid, features FROM zone_sets").all() as {
    uuid: string;
    features: string;
  }[];
  for (const { uuid, features } of rows) update.run(zoneSetBboxJson(JSON.parse(features)), uuid);
}

export function migrate(db: Database.Database): number {
  const current = db.pragma("user_version", { simple: true }) as number;
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      const step = MIGRATIONS[v];
      if (typeof step === "string") db.exec(step);
      else step(db);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  return MIGRATIONS.length;
}
