import { afterEach, beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { WAL_BOUND_BYTES } from "../../src/store/sqlite/wal-checkpoints.js";

/** ~20 MB in one transaction: ~1,250 WAL pages of 16 KB, past SQLite's default auto-checkpoint of 1,000. */
const ROWS = 5000;
const ROW_BYTES = 4000;

async function writeLargeTransaction(store: SqliteStore, rows = ROWS): Promise<void> {
  store.db.exec("CREATE TABLE IF NOT EXISTS scratch (id INTEGER PRIMARY KEY, b BLOB)");
  await store.transaction(async () => {
    const insert = store.db.prepare("INSERT INTO scratch (b) VALUES (?)");
    for (let i = 0; i < rows; i++) insert.run(randomBytes(ROW_BYTES));
  });
}

const pageSizeOf = (store: SqliteStore) => store.db.pragma("page_size", { simple: true }) as number;

describe("SQLite WAL checkpoints", () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sf-wal-"));
    file = join(dir, "streetflow.sqlite");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a large transaction's COMMIT leaves the copy into the database file to the background checkpoint", async () => {
    const store = new SqliteStore(file);
    try {
      const sizeBefore = statSync(file).size;
      await writeLargeTransaction(store);
      // Checkpoints start only after this turn of the event loop, so this is what the COMMIT itself did.
      assert.equal(statSync(file).size, sizeBefore, "the COMMIT copied WAL frames into the database file");

      const report = await store.walCheckpointed();
      assert.ok(report, "no checkpoint ran after the transaction");
      assert.equal(report.busy, 0);
      assert.ok(report.log > 1000, `WAL of ${report.log} frames`);
      assert.equal(report.checkpointed, report.log, "every committed frame copied");
      assert.ok(statSync(file).size >= sizeBefore + ROWS * ROW_BYTES);
    } finally {
      await store.close();
    }
  });

  it("a transaction of a month's ingest batch (~40 MB) commits without copying into the database file", async () => {
    const store = new SqliteStore(file);
    try {
      const sizeBefore = statSync(file).size;
      // A batch of 20,000 trips rewrites its month's tallies, ~30 MB on Monaco; the bound was once 32 MB.
      await writeLargeTransaction(store, 2 * ROWS);
      assert.equal(statSync(file).size, sizeBefore, "the COMMIT copied WAL frames into the database file");
      const { log } = (await store.walCheckpointed())!;
      assert.ok(
        log * pageSizeOf(store) > 32 * 1024 * 1024,
        `only ${log} WAL frames: not past the former bound`,
      );
    } finally {
      await store.close();
    }
  });

  it("bounds the WAL: past WAL_BOUND_BYTES the writer checkpoints itself, and a restarted WAL is cut back", async () => {
    const store = new SqliteStore(file);
    try {
      const pageSize = pageSizeOf(store);
      assert.equal(store.db.pragma("wal_autocheckpoint", { simple: true }), WAL_BOUND_BYTES / pageSize);
      assert.equal(store.db.pragma("journal_size_limit", { simple: true }), WAL_BOUND_BYTES);
    } finally {
      await store.close();
    }
  });

  it("a clean close, even with a checkpoint in flight, leaves every row in the database file and no WAL", async () => {
    const store = new SqliteStore(file);
    await writeLargeTransaction(store);
    await store.close();

    assert.ok(!existsSync(`${file}-wal`) || statSync(`${file}-wal`).size === 0, "WAL left behind");
    const db = new Database(file, { readonly: true });
    try {
      const { n, bytes } = db.prepare("SELECT COUNT(*) AS n, SUM(length(b)) AS bytes FROM scratch").get() as {
        n: number;
        bytes: number;
      };
      assert.deepEqual({ n, bytes }, { n: ROWS, bytes: ROWS * ROW_BYTES });
    } finally {
      db.close();
    }
  });

  it("the data survive the next open after the process's checkpoints (reopen, write again, close)", async () => {
    const first = new SqliteStore(file);
    await writeLargeTransaction(first);
    await first.walCheckpointed();
    await first.close();
    const second = new SqliteStore(file);
    try {
      await writeLargeTransaction(second);
      const { n } = second.db.prepare("SELECT COUNT(*) AS n FROM scratch").get() as { n: number };
      assert.equal(n, 2 * ROWS);
    } finally {
      await second.close();
    }
  });

  it("creates a new store with 16 KB pages, and keeps the pages of a store created before", async () => {
    const store = new SqliteStore(file);
    assert.equal(pageSizeOf(store), 16_384);
    await store.close();
    const older = join(dir, "older.sqlite");
    const db = new Database(older);
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE older_rows (id INTEGER PRIMARY KEY)");
    db.close();
    const reopened = new SqliteStore(older);
    try {
      assert.equal(pageSizeOf(reopened), 4096);
      await writeLargeTransaction(reopened, 10);
    } finally {
      await reopened.close();
    }
  });

  it("an in-memory store has no WAL to checkpoint", async () => {
    const store = new SqliteStore(":memory:");
    try {
      await writeLargeTransaction(store);
      assert.equal(await store.walCheckpointed(), null);
    } finally {
      await store.close();
    }
  });
});
