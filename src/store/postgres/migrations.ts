import type pg from "pg";
import { rebuildYearRollups } from "./segment-rollups.js";
import { encodeResultPage } from "../result-pages.js";

/**
 * Versioned schema of the PostgreSQL store. Every process runs `migrate` on start: an advisory lock
 * lets one of them apply what is missing while the others wait, each step runs in its own transaction
 * and `streetflow_migrations` records it, so running it again changes nothing. Append only: never edit
 * a step that has shipped.
 *
 * The tables are those of the SQLite store, with these differences:
 * - text is `ctext`, text under the "C" collation: keys and ISO timestamps sort and compare bytewise,
 *   as in SQLite, whatever the database's locale;
 * - trip chunks live in one partition per month (`trip_chunks_YYYY_MM`, created on first use by
 *   PostgresTrips), so old months can be detached or dropped whole;
 * - memberships carry a sequence, the order of joining that SQLite keeps as rowid.
 *
 * A step is SQL, or a function run on the migrating connection inside the step's transaction (data that
 * is computed in TypeScript, as the rollups from the packed totals).
 */
export type PgMigration = string | ((client: pg.PoolClient) => Promise<void>);

export const PG_MIGRATIONS: PgMigration[] = [
  `
  CREATE DOMAIN ctext AS text COLLATE "C";

  CREATE TABLE organizations (
    id ctext PRIMARY KEY,
    name ctext NOT NULL,
    name_key ctext NOT NULL UNIQUE,
    created_at ctext NOT NULL
  );
  CREATE TABLE users (
    email_key ctext PRIMARY KEY,
    email ctext NOT NULL,
    created_at ctext NOT NULL,
    password_hash ctext,
    disabled_at ctext
  );
  CREATE TABLE memberships (
    email_key ctext NOT NULL REFERENCES users(email_key),
    org_id ctext NOT NULL REFERENCES organizations(id),
    role ctext NOT NULL,
    seq bigserial NOT NULL,
    PRIMARY KEY (email_key, org_id)
  );
  CREATE TABLE api_keys (
    id ctext PRIMARY KEY,
    org_id ctext NOT NULL REFERENCES organizations(id),
    prefix ctext NOT NULL,
    key_hash ctext NOT NULL UNIQUE,
    label ctext,
    created_at ctext NOT NULL,
    revoked_at ctext,
    counts_quota_units bigint,
    rate_limit_per_minute integer,
    kind ctext NOT NULL DEFAULT 'api'
  );
  CREATE INDEX api_keys_org ON api_keys (org_id);

  CREATE TABLE network_imports (
    country ctext PRIMARY KEY,
    source ctext NOT NULL,
    segment_count integer NOT NULL,
    imported_at ctext NOT NULL,
    time_zone ctext
  );
  CREATE TABLE segments (
    country ctext NOT NULL,
    id bigint NOT NULL,
    way_id bigint NOT NULL,
    piece integer NOT NULL,
    road_class ctext NOT NULL,
    highway ctext NOT NULL,
    road_type ctext NOT NULL,
    oneway boolean NOT NULL,
    speed_kph double precision NOT NULL,
    name ctext,
    length_m double precision NOT NULL,
    from_node bigint NOT NULL,
    to_node bigint NOT NULL,
    access integer NOT NULL,
    coords bytea NOT NULL,
    PRIMARY KEY (country, id)
  );
  CREATE TABLE transit_routes (
    country ctext NOT NULL,
    kind ctext NOT NULL,
    osm_id bigint NOT NULL,
    service ctext NOT NULL,
    name ctext,
    ref ctext,
    way_ids text NOT NULL,
    coords bytea NOT NULL,
    PRIMARY KEY (country, kind, osm_id)
  );
  CREATE TABLE preset_areas (
    country ctext NOT NULL,
    geography_type ctext NOT NULL,
    area_id ctext NOT NULL,
    osm_id bigint NOT NULL,
    name ctext,
    geometry text NOT NULL,
    PRIMARY KEY (country, geography_type, area_id)
  );

  CREATE TABLE zone_sets (
    uuid ctext PRIMARY KEY,
    org_id ctext NOT NULL REFERENCES organizations(id),
    name ctext NOT NULL,
    name_key ctext NOT NULL,
    geom_type ctext NOT NULL,
    with_calibration boolean NOT NULL,
    zone_count integer NOT NULL,
    created_at ctext NOT NULL,
    features text NOT NULL,
    bbox text,
    UNIQUE (org_id, name_key)
  );

  CREATE TABLE trip_day_counts (
    country ctext NOT NULL,
    day ctext NOT NULL,
    vehicle_class ctext NOT NULL,
    source ctext NOT NULL,
    trips bigint NOT NULL,
    devices bigint NOT NULL,
    PRIMARY KEY (country, day, vehicle_class, source)
  );
  CREATE TABLE trip_chunks (
    id bigserial NOT NULL,
    country ctext NOT NULL,
    month ctext NOT NULL,
    format integer NOT NULL,
    trip_count integer NOT NULL,
    step_count integer NOT NULL,
    class_mask integer NOT NULL,
    devices text NOT NULL,
    columns bytea NOT NULL,
    PRIMARY KEY (country, month, id)
  ) PARTITION BY RANGE (month);
  CREATE TABLE trip_fingerprints (
    country ctext NOT NULL,
    fingerprint bytea NOT NULL,
    PRIMARY KEY (country, fingerprint)
  );
  CREATE TABLE trip_device_days (
    country ctext NOT NULL,
    day ctext NOT NULL,
    vehicle_class ctext NOT NULL,
    source ctext NOT NULL,
    device_key bytea NOT NULL,
    PRIMARY KEY (country, day, vehicle_class, source, device_key)
  );
  CREATE TABLE ingest_runs (
    id bigserial PRIMARY KEY,
    country ctext NOT NULL,
    source ctext NOT NULL,
    path ctext NOT NULL,
    size_bytes bigint NOT NULL,
    sha256 ctext NOT NULL,
    started_at ctext NOT NULL,
    finished_at ctext NOT NULL,
    counts text NOT NULL
  );

  CREATE TABLE segment_month_totals (
    country ctext NOT NULL,
    segment_id bigint NOT NULL,
    month ctext NOT NULL,
    cells bytea NOT NULL,
    PRIMARY KEY (country, segment_id, month)
  );
  CREATE TABLE segment_month_details (
    country ctext NOT NULL,
    segment_id bigint NOT NULL,
    month ctext NOT NULL,
    cells bytea NOT NULL,
    PRIMARY KEY (country, segment_id, month)
  );
  CREATE TABLE counts_results (
    request_id ctext PRIMARY KEY,
    org_id ctext NOT NULL,
    kind ctext NOT NULL,
    columns text NOT NULL,
    extra text NOT NULL,
    page_size integer NOT NULL,
    total_rows integer NOT NULL,
    created_at ctext NOT NULL,
    expires_at ctext NOT NULL
  );
  CREATE INDEX counts_results_expiry ON counts_results (expires_at);
  CREATE TABLE counts_result_pages (
    request_id ctext NOT NULL REFERENCES counts_results(request_id) ON DELETE CASCADE,
    page integer NOT NULL,
    rows text NOT NULL,
    PRIMARY KEY (request_id, page)
  );
  CREATE TABLE counts_usage (
    id bigserial PRIMARY KEY,
    key_id ctext NOT NULL,
    org_id ctext NOT NULL,
    at ctext NOT NULL,
    segments integer NOT NULL,
    fields integer NOT NULL,
    units bigint NOT NULL
  );
  CREATE INDEX counts_usage_key ON counts_usage (key_id, at);
  CREATE INDEX counts_usage_org ON counts_usage (org_id, at);

  CREATE TABLE jobs (
    id ctext PRIMARY KEY,
    seq bigserial NOT NULL UNIQUE,
    kind ctext NOT NULL,
    payload text NOT NULL,
    state ctext NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    lease_owner ctext,
    lease_expires_at bigint,
    failure_reason text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    priority integer NOT NULL DEFAULT 0
  );
  CREATE INDEX jobs_claimable ON jobs (state, priority DESC, seq);
  CREATE TABLE analyses (
    uuid ctext PRIMARY KEY,
    org_id ctext NOT NULL REFERENCES organizations(id),
    name ctext NOT NULL,
    name_lookup ctext NOT NULL,
    name_key ctext,
    spec text NOT NULL,
    state ctext NOT NULL,
    failure_reason text,
    metrics text NOT NULL DEFAULT '[]',
    progress double precision NOT NULL DEFAULT 0,
    job_id ctext,
    created_at ctext NOT NULL,
    started_at ctext,
    finished_at ctext,
    UNIQUE (org_id, name_key)
  );
  CREATE INDEX analyses_by_name ON analyses (org_id, name_lookup);
  CREATE TABLE analysis_results (
    analysis_uuid ctext NOT NULL REFERENCES analyses(uuid),
    metric ctext NOT NULL,
    csv text NOT NULL,
    PRIMARY KEY (analysis_uuid, metric)
  );
  CREATE TABLE tags (
    id bigserial PRIMARY KEY,
    org_id ctext NOT NULL REFERENCES organizations(id),
    name ctext NOT NULL,
    name_key ctext NOT NULL,
    created_by ctext NOT NULL,
    created_at ctext NOT NULL,
    UNIQUE (org_id, name_key)
  );
  CREATE TABLE analysis_tags (
    analysis_uuid ctext NOT NULL REFERENCES analyses(uuid),
    tag_id bigint NOT NULL REFERENCES tags(id),
    PRIMARY KEY (analysis_uuid, tag_id)
  );
  CREATE INDEX analysis_tags_by_tag ON analysis_tags (tag_id);
  CREATE TABLE completion_webhooks (
    org_id ctext PRIMARY KEY REFERENCES organizations(id),
    url ctext NOT NULL,
    updated_at ctext NOT NULL
  );

  CREATE TABLE sessions (
    id_hash ctext PRIMARY KEY,
    email_key ctext NOT NULL REFERENCES users(email_key),
    org_id ctext NOT NULL REFERENCES organizations(id),
    csrf_token ctext NOT NULL,
    created_at ctext NOT NULL,
    last_seen_at ctext NOT NULL
  );
  CREATE INDEX sessions_user ON sessions (email_key);
  CREATE TABLE login_failures (
    subject ctext PRIMARY KEY,
    failures integer NOT NULL,
    last_failure_at ctext NOT NULL,
    locked_until ctext
  );
  CREATE TABLE password_resets (
    token_hash ctext PRIMARY KEY,
    email_key ctext NOT NULL REFERENCES users(email_key),
    expires_at ctext NOT NULL,
    used_at ctext
  );
  CREATE TABLE audit_log (
    id bigserial PRIMARY KEY,
    org_id ctext NOT NULL,
    at ctext NOT NULL,
    actor ctext NOT NULL,
    action ctext NOT NULL,
    target ctext
  );
  CREATE INDEX audit_log_org ON audit_log (org_id, id);
  `,
  // Chunks of distributed ingests (issue 15): input until done, then the done marker and its result.
  `
  CREATE TABLE ingest_chunks (
    ingest_id ctext NOT NULL,
    seq integer NOT NULL,
    state ctext NOT NULL DEFAULT 'queued',
    input bytea,
    result text,
    failure text,
    created_at ctext NOT NULL,
    PRIMARY KEY (ingest_id, seq)
  );
  `,
  // Whole-month rollups of the packed counts (src/store/sqlite/segment-rollups.ts, the same BLOBs as
  // SQLite's segment_year_rollups): one row per segment × year, computed here from the month totals; and
  // the version of each country's rollups, for the copies processes keep in memory.
  async (client) => {
    await client.query(`
      CREATE TABLE segment_year_rollups (
        country ctext NOT NULL,
        segment_id bigint NOT NULL,
        year ctext NOT NULL,
        cells bytea NOT NULL,
        PRIMARY KEY (country, segment_id, year)
      );
      -- Bumped with every write of a country's rollups: what processes keep in memory (rollup-cache.ts).
      CREATE TABLE segment_counts_versions (
        country ctext PRIMARY KEY,
        version bigint NOT NULL
      )`);
    await rebuildYearRollups(client);
  },
  // Analysis CSVs (175 MB for 1 M trips × 1,000 zones) compressed with lz4 instead of pglz, which took
  // the server several CPU seconds per analysis, serially at its end (issue 15; docs/performance.md).
  // Rows written before keep pglz (both read alike); a server built without lz4 keeps pglz.
  `
  DO $$ BEGIN
    ALTER TABLE analysis_results ALTER COLUMN csv SET COMPRESSION lz4;
  EXCEPTION WHEN feature_not_supported THEN NULL;
  END $$;
  `,
  // Later pages of counts answers as the binary pages of src/store/result-pages.ts, as in SQLite, not
  // JSON text (writing a year's rows as JSON cost as much as computing them); pages stored before are
  // converted here.
  async (client) => {
    await client.query("ALTER TABLE counts_result_pages ADD COLUMN cells bytea");
    const { rows } = await client.query<{ request_id: string; page: number; rows: string }>(
      "SELECT request_id, page, rows FROM counts_result_pages",
    );
    for (const r of rows)
      await client.query("UPDATE counts_result_pages SET cells = $3 WHERE request_id = $1 AND page = $2", [
        r.request_id,
        r.page,
        encodeResultPage(JSON.parse(r.rows) as unknown[][]),
      ]);
    await client.query("ALTER TABLE counts_result_pages DROP COLUMN rows, ALTER COLUMN cells SET NOT NULL");
  },
  // Trip chunks compressed with lz4 instead of pglz (issue 15): compressing 1,000,000 trips' chunks
  // (1.56 GB) took the server 29-41 s of CPU with pglz and 3-5 s with lz4, which also stores them in
  // 169 MB instead of 279 MB and reads them faster (docs/performance.md). The month partitions made
  // from now on take the parent's setting; those already there are set here. Chunks written before keep
  // pglz (both read alike); a server built without lz4 keeps pglz.
  `
  DO $$
  DECLARE partition regclass;
  BEGIN
    ALTER TABLE trip_chunks ALTER COLUMN columns SET COMPRESSION lz4;
    FOR partition IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'trip_chunks'::regclass LOOP
      EXECUTE format('ALTER TABLE %s ALTER COLUMN columns SET COMPRESSION lz4', partition);
    END LOOP;
  EXCEPTION WHEN feature_not_supported THEN NULL;
  END $$;
  `,
  // The devices each month has seen, kept at ingest beside the device-days as in SQLite (issue 15): the
  // expansion factors' input, read by every analysis and counts call, was a COUNT(DISTINCT) over every
  // device-day.
  `
  CREATE TABLE trip_device_months (
    country ctext NOT NULL,
    month ctext NOT NULL,
    device_key bytea NOT NULL,
    PRIMARY KEY (country, month, device_key)
  );
  INSERT INTO trip_device_months (country, month, device_key)
    SELECT DISTINCT country, substr(day, 1, 7), device_key FROM trip_device_days;
  `,
  // Pieces of analysis CSVs, stored by the merge parts of a sharded analysis side by side while it runs
  // (issue 15): the analysis' last step then writes only the small tables instead of 175 MB serially.
  `
  CREATE TABLE analysis_result_pieces (
    analysis_uuid ctext NOT NULL REFERENCES analyses(uuid),
    metric ctext NOT NULL,
    piece integer NOT NULL,
    csv text NOT NULL,
    PRIMARY KEY (analysis_uuid, metric, piece)
  );
  DO $$ BEGIN
    ALTER TABLE analysis_result_pieces ALTER COLUMN csv SET COMPRESSION lz4;
  EXCEPTION WHEN feature_not_supported THEN NULL;
  END $$;
  `,
];

/** Any constant, the same in every process: the advisory lock that serialises migrations. */
const MIGRATION_LOCK = 0x5f_5f_5f_01;

/** Applies the missing steps; answers the schema version. */
export async function migrate(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS streetflow_migrations (
         version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await client.query<{ v: number }>(
      "SELECT COALESCE(MAX(version), 0)::int AS v FROM streetflow_migrations",
    );
    for (let v = rows[0].v; v < PG_MIGRATIONS.length; v++) {
      try {
        await client.query("BEGIN");
        const step = PG_MIGRATIONS[v];
        if (typeof step === "string") await client.query(step);
        else await step(client);
        await client.query("INSERT INTO streetflow_migrations (version) VALUES ($1)", [v + 1]);
        await client.query("COMMIT");
      } catch (e) {
        await client.query("ROLLBACK");
        throw e;
      }
    }
    return PG_MIGRATIONS.length;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => {});
    client.release();
  }
}
