import type { IngestChunkRepo, IngestChunkState } from "../../app/ports/store.js";
import type { PgDb } from "./db.js";
import { toChunkState, type ChunkRow } from "../rows.js";

/** Chunks of distributed ingests, shared by every worker process. */
export class PostgresIngestChunks implements IngestChunkRepo {
  constructor(private readonly db: PgDb) {}

  async add(ingestId: string, seq: number, input: Uint8Array): Promise<void> {
    await this.db.run(
      "INSERT INTO ingest_chunks (ingest_id, seq, input, created_at) VALUES ($1, $2, $3, $4)",
      [
        ingestId,
        seq,
        Buffer.from(input.buffer, input.byteOffset, input.byteLength),
        new Date().toISOString(),
      ],
    );
  }

  async input(ingestId: string, seq: number): Promise<Uint8Array | null> {
    const row = await this.db.row<{ input: Buffer | null }>(
      "SELECT input FROM ingest_chunks WHERE ingest_id = $1 AND seq = $2 AND state = 'queued'",
      [ingestId, seq],
    );
    return row?.input ?? null;
  }

  /** The row lock is held to the commit: a second run of the chunk waits, then finds it done. */
  async lockUndone(ingestId: string, seq: number): Promise<boolean> {
    const row = await this.db.row<{ state: string }>(
      "SELECT state FROM ingest_chunks WHERE ingest_id = $1 AND seq = $2 FOR UPDATE",
      [ingestId, seq],
    );
    return row?.state === "queued";
  }

  async markDone(ingestId: string, seq: number, result: Record<string, unknown>): Promise<void> {
    await this.db.run(
      "UPDATE ingest_chunks SET state = 'done', result = $1, input = NULL WHERE ingest_id = $2 AND seq = $3",
      [JSON.stringify(result), ingestId, seq],
    );
  }

  async markFailed(ingestId: string, seq: number, reason: string): Promise<void> {
    await this.db.run(
      `UPDATE ingest_chunks SET state = 'failed', failure = $1, input = NULL
       WHERE ingest_id = $2 AND seq = $3 AND state = 'queued'`,
      [reason, ingestId, seq],
    );
  }

  async list(ingestId: string): Promise<IngestChunkState[]> {
    const rows = await this.db.rows<ChunkRow>(
      "SELECT seq, state, result, failure FROM ingest_chunks WHERE ingest_id = $1 ORDER BY seq",
      [ingestId],
    );
    return rows.map(toChunkState);
  }

  async drop(ingestId: string): Promise<void> {
    await this.db.run("DELETE FROM ingest_chunks WHERE ingest_id = $1", [ingestId]);
  }
}
