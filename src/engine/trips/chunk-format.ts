import { checkedCodeTable, CODE_TABLE_VERSION, StoredFormatError } from "./codes.js";
import { COLUMN_LAYOUT, columnsOf, lengthOf, type TripColumns } from "./columns.js";

/**
 * The stored form of a trip chunk: the typed-array columns of COLUMN_LAYOUT back to back, each
 * padded to 8 bytes so a reader views them in place. Numbers are in the machine's byte order
 * (little-endian on x86-64 and ARM64); the magic word tells a reader of the other order.
 *
 * - Format 1 (first release): the columns only. Trip and step counts live beside the BLOB (the
 *   store's row), codes are code table 1's.
 * - Format 2: a 16-byte header describes the chunk, then the columns as in format 1. Header words
 *   (uint32): magic "SFTC", format | code table << 16, trips, path steps.
 *
 * Readers check the format and the code table before reading a code: an unknown one is a
 * StoredFormatError, never a misread.
 */
export const CHUNK_FORMAT = 2;
const MAGIC = 0x43_54_46_53; // bytes "SFTC" in little-endian order
const HEADER_BYTES = 16;

/** What a store keeps beside the BLOB (format 1 has its counts nowhere else). */
export interface ChunkEnvelope {
  format: number;
  tripCount: number;
  stepCount: number;
  devices: string[];
}

const pad8 = (n: number) => Math.ceil(n / 8) * 8;

/** The chunk in the current format, header first. */
export function encodeChunk(cols: TripColumns): Uint8Array {
  const arrays = COLUMN_LAYOUT.map(([name]) => cols[name]);
  const out = new Uint8Array(HEADER_BYTES + arrays.reduce((sum, a) => sum + pad8(a.byteLength), 0));
  new Uint32Array(out.buffer, 0, 4).set([
    MAGIC,
    CHUNK_FORMAT | (CODE_TABLE_VERSION << 16),
    cols.count,
    cols.pathStart[cols.count],
  ]);
  let offset = HEADER_BYTES;
  for (const a of arrays) {
    out.set(new Uint8Array(a.buffer, a.byteOffset, a.byteLength), offset);
    offset += pad8(a.byteLength);
  }
  return out;
}

/**
 * Columns of a stored chunk of any supported format, as views on the bytes: on the blob itself when
 * it starts 8-byte aligned (the usual case for a fresh allocation; a scan of 1 M trips then copies
 * no 1.5 GB), else on one aligned copy.
 */
export function decodeChunk(blob: Uint8Array, envelope: ChunkEnvelope): TripColumns {
  const bytes = blob.byteOffset % 8 === 0 ? blob : Uint8Array.from(blob);
  const buffer = bytes.buffer as ArrayBuffer;
  const columnsAt = headerBytes(bytes, envelope);
  const { tripCount, stepCount } = envelope;
  const arrays: ArrayBufferView[] = [];
  let offset = columnsAt;
  for (const [name, Type] of COLUMN_LAYOUT) {
    const length = lengthOf(name, tripCount, stepCount);
    if (offset + length * Type.BYTES_PER_ELEMENT > bytes.byteLength)
      throw new StoredFormatError(`trip chunk shorter than its ${tripCount} trips need: damaged data`);
    arrays.push(new Type(buffer, bytes.byteOffset + offset, length));
    offset += pad8(length * Type.BYTES_PER_ELEMENT);
  }
  return columnsOf(tripCount, envelope.devices, arrays);
}

/** Checks the chunk's own description against the format it is filed under; where its columns start. */
function headerBytes(bytes: Uint8Array, envelope: ChunkEnvelope): number {
  if (envelope.format === 1) return 0;
  if (envelope.format !== CHUNK_FORMAT)
    throw new StoredFormatError(
      `trip chunk format ${envelope.format} is not supported (this version reads 1 to ${CHUNK_FORMAT}): upgrade to read it`,
    );
  if (bytes.byteLength < HEADER_BYTES)
    throw new StoredFormatError("trip chunk without its header: damaged data");
  const [magic, formatWord, trips, steps] = new Uint32Array(bytes.buffer, bytes.byteOffset, 4);
  if (magic !== MAGIC)
    throw new StoredFormatError(
      magic === byteSwapped(MAGIC)
        ? "trip chunk written on a machine of the other byte order"
        : "trip chunk without its header: damaged data",
    );
  if ((formatWord & 0xffff) !== envelope.format)
    throw new StoredFormatError(`trip chunk says format ${formatWord & 0xffff}, filed as ${envelope.format}`);
  checkedCodeTable(formatWord >>> 16, "trip chunk");
  if (trips !== envelope.tripCount || steps !== envelope.stepCount)
    throw new StoredFormatError(
      `trip chunk holds ${trips} trips and ${steps} steps, filed as ${envelope.tripCount} and ${envelope.stepCount}`,
    );
  return HEADER_BYTES;
}

const byteSwapped = (word: number) =>
  (((word & 0xff) << 24) | ((word & 0xff00) << 8) | ((word >>> 8) & 0xff00) | (word >>> 24)) >>> 0;
