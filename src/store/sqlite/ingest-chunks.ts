import type Database from "better-sqlite3";
import type { IngestChunkRepo, IngestChunkState } from "../../app/ports/store.js";
import type { Sync } from "./async-port.js";
import { toChunkState, type ChunkRow } from "../rows.js";

/** Chunks of distributed ingests; SQLite's one writer at a time already serialises runs of a chunk. */
export class SqliteIngestChunks implements Sync<IngestChunkRepo> {
  constructor(private readonly db: Database.Database) {}

  add(ingestId: string, seq: number, input: Uint8Array): void {
    this.db
      .prepare("INSERT INTO ingest_chunks (ingest_id, seq, input, created_at) VALUES (?, ?, ?, ?)")
      .run(
        ingestId,
        seq,
        Buffer.from(input.buffer, input.byteOffset, input.byteLength),
        new Date().toISOString(),
      );
  }

  input(ingestId: string, seq: number): Uint8Array | null {
    const row = this.db
      .prepare("SELECT input FROM ingest_chunks WHERE ingest_id = ? AND seq = ? AND state = 'queued'")
      .get(ingestId, seq) as { input: Buffer | null } | undefined;
    return row?.input ?? null;
  }

  lockUndone(ingestId: string, seq: number): boolean {
    return this.input(ingestId, seq) !== null;
  }

  markDone(ingestId: string, seq: number, result: Record<string, unknown>): void {
    this.db
      .prepare(
        "UPDATE ingest_chunks SET state = 'done', result = ?, input = NULL WHERE ingest_id = ? AND seq = ?",
      )
      .run(JSON.stringify(result), ingestId, seq);
  }

  markFailed(ingestId: string, seq: number, reason: string): void {
    this.db
      .prepare(
        `UPDATE ingest_chunks SET state = 'failed', failure = ?, input = NULL
         WHERE ingest_id = ? AND seq = ? AND state = 'queued'`,
      )
      .run(reason, ingestId, seq);
  }

  list(ingestId: string): IngestChunkState[] {
    const rows = this.db
      .prepare("SELECT seq, state, result, failure FROM ingest_chunks WHERE ingest_id = ? ORDER BY seq")
      .all(ingestId) as ChunkRow[];
    return rows.map(toChunkState);
  }

  drop(ingestId: string): void {
    this.db.prepare("DELETE FROM ingest_chunks WHERE ingest_id = ?").run(ingestId);
  }
}
