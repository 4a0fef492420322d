/** Bytes per chunk: a batch's ~3,000 segment-months of Monaco are ~6 MB of BLOBs. */
const CHUNK_BYTES = 256 * 1024;

/**
 * Many small BLOBs of one batch (segment-months, their year rollups), cut from large chunks: a fresh
 * ArrayBuffer per BLOB and scratch array cost ~0.8 µs each (docs/performance.md, "Stop 44"), ~7 per
 * segment-month of an ingest batch. Each BLOB is a Buffer over its chunk, 8-aligned (the typed views of the
 * packed layouts need it); a chunk is freed once no BLOB of it is held (after the statements that bind them ran).
 */
export class BlobArena {
  private chunk = new ArrayBuffer(0);
  private bytes = Buffer.alloc(0);
  private used = 0;

  /** Room for a BLOB of `length` bytes, zero-filled: its buffer and offset, for the layout's views. */
  take(length: number): { buffer: ArrayBuffer; offset: number; blob: Buffer } {
    const size = Math.ceil(length / 8) * 8;
    if (this.used + size > this.chunk.byteLength) {
      this.chunk = new ArrayBuffer(Math.max(CHUNK_BYTES, size));
      this.bytes = Buffer.from(this.chunk);
      this.used = 0;
    }
    const offset = this.used;
    this.used += size;
    return { buffer: this.chunk, offset, blob: this.bytes.subarray(offset, offset + length) };
  }

  /** Room for `n` float64s (zero-filled), held like a BLOB. */
  float64s(n: number): Float64Array {
    const { buffer, offset } = this.take(8 * n);
    return new Float64Array(buffer, offset, n);
  }
}
