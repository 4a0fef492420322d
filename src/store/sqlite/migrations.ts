import type Database from "better-sqlite3";

/**
 * Versioned schema. Each entry runs once, in order, inside a transaction;
 * `PRAGMA user_version` records how far a database has come. Append only:
 * never edit a migration that has shipped.
 */
export const MIGRATIONS: string[] = [
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
];

export function migrate(db: Database.Database): number {
  const current = db.pragma("user_version", { simple: true }) as number;
  for (let v = current; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v]);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  return MIGRATIONS.length;
}
