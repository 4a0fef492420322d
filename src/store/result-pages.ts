import { StoredFormatError } from "../engine/trips/codes.js";
import { aligned } from "./sqlite/segment-month-pack.js";
import type { TableSlice } from "../engine/counts/metric-table.js";

/**
 * A stored page of a counts result (rows of equal length) as a BLOB of columns: serialising a year's
 * 12,000 rows as JSON text cost as much as computing them. Each column is stored by what it holds:
 *
 * - `i32`: integers of the int32 range, as an Int32Array;
 * - `f64`: numbers and nulls, as a Float64Array with NaN for null (JSON has no NaN nor ±Infinity:
 *   it writes null for them, so these read back as null, as from JSON text);
 * - `dict`: strings, as uint32 indices into a dictionary kept in the header;
 * - `json`: anything else (objects, mixed columns), its values in the header as JSON.
 *
 * A page read back is deep-equal to `JSON.parse(JSON.stringify(rows))` (−0 is stored as 0 for the same
 * reason). Rows of unequal length are stored as one `json` value. Layout: uint32 header length, the
 * header (JSON: format, row count, column descriptions), padding to 8 bytes, then the binary columns,
 * each padded to 8 bytes.
 */
const FORMAT = 1;

/**
 * Expired results a save deletes, at most, oldest first. Unbounded, the save after a lull deleted every
 * result that expired since, in the request's transaction: 200 year answers (11 pages each) expiring
 * together cost that one save 88–108 ms instead of 2–3. Each save adds one result and drops up to two, so
 * a backlog drains at the rate answers are stored, each save paying for two results at most. Expired
 * results are never served (`get` checks the time), so the ones left only take disk space meanwhile.
 */
export const EXPIRED_RESULTS_PER_SAVE = 2;

type Column =
  { t: "i32" } | { t: "f64" } | { t: "dict"; values: string[] } | { t: "json"; values: unknown[] };
interface Header {
  format: number;
  rows: number;
  /** Rows of unequal length: the whole page as JSON. */
  whole?: unknown[][];
  columns: Column[];
}

const pad8 = (n: number) => Math.ceil(n / 8) * 8;

/** The narrowest column kind holding every row's value `c` (plain loops: this runs per value). */
function kindOf(rows: readonly unknown[][], c: number): Column["t"] {
  let [int32, numbers, strings] = [true, true, true];
  for (const row of rows) {
    const v = row[c];
    if (typeof v === "number") {
      strings = false;
      if ((v | 0) !== v) int32 = false;
    } else if (v === null) [int32, strings] = [false, false];
    else if (typeof v === "string") [int32, numbers] = [false, false];
    else return "json";
    if (!numbers && !strings) return "json";
  }
  return int32 ? "i32" : numbers ? "f64" : "dict";
}

function int32Column(rows: readonly unknown[][], c: number): Int32Array {
  const out = new Int32Array(rows.length);
  // (v | 0) turns −0 into 0, as JSON text would.
  for (let i = 0; i < rows.length; i++) out[i] = (rows[i][c] as number) | 0;
  return out;
}

function float64Column(rows: readonly unknown[][], c: number): Float64Array {
  const out = new Float64Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i][c] as number | null;
    out[i] = v === null ? NaN : v === 0 ? 0 : v;
  }
  return out;
}

function dictColumn(rows: readonly unknown[][], c: number): { ids: Uint32Array; values: string[] } {
  const index = new Map<string, number>();
  const ids = new Uint32Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i][c] as string;
    let id = index.get(v);
    if (id === undefined) index.set(v, (id = index.size));
    ids[i] = id;
  }
  return { ids, values: [...index.keys()] };
}

/** A page as its rows, or as a slice of a column table (what a metrics answer stores, no row made). */
export function encodeResultPage(page: readonly unknown[][] | TableSlice): Buffer {
  return isSlice(page) ? encodeSlice(page) : encodeRows(page);
}

const isSlice = (page: readonly unknown[][] | TableSlice): page is TableSlice => !Array.isArray(page);

/** The columns of a table slice stored as they are: numbers as i32 when all are, text by its dictionary. */
function encodeSlice({ table, from, to }: TableSlice): Buffer {
  const columns: Column[] = [];
  const binary: (Int32Array | Float64Array | Uint32Array)[] = [];
  for (const column of table.columns) {
    if (column.kind === "any") {
      columns.push({ t: "json", values: column.values.slice(from, to) });
    } else if (column.kind === "text") {
      columns.push({ t: "dict", values: [...column.dict] });
      binary.push(column.ids.slice(from, to));
    } else {
      const values = column.values.subarray(from, to);
      let int32 = true;
      for (let i = 0; i < values.length && int32; i++) int32 = (values[i] | 0) === values[i];
      columns.push({ t: int32 ? "i32" : "f64" });
      // Int32Array (ToInt32) and v === 0 ? 0 turn −0 into 0, as JSON text would.
      binary.push(int32 ? new Int32Array(values) : values.map((v) => (v === 0 ? 0 : v)));
    }
  }
  return withHeader({ format: FORMAT, rows: to - from, columns }, binary);
}

function encodeRows(rows: readonly unknown[][]): Buffer {
  const width = rows.length > 0 ? rows[0].length : 0;
  if (rows.some((r) => r.length !== width))
    return withHeader({ format: FORMAT, rows: rows.length, whole: [...rows], columns: [] }, []);
  const columns: Column[] = [];
  const binary: (Int32Array | Float64Array | Uint32Array)[] = [];
  for (let c = 0; c < width; c++) {
    const kind = kindOf(rows, c);
    if (kind === "dict") {
      const { ids, values } = dictColumn(rows, c);
      columns.push({ t: "dict", values });
      binary.push(ids);
    } else if (kind === "json") {
      // JSON.stringify of the header does to these values what it did to the rows.
      columns.push({ t: "json", values: rows.map((r) => r[c]) });
    } else {
      columns.push({ t: kind });
      binary.push(kind === "i32" ? int32Column(rows, c) : float64Column(rows, c));
    }
  }
  return withHeader({ format: FORMAT, rows: rows.length, columns }, binary);
}

export function decodeResultPage(raw: Uint8Array): unknown[][] {
  const blob = aligned(raw);
  const headerBytes = new DataView(blob.buffer, blob.byteOffset, 4).getUint32(0, true);
  const header = JSON.parse(Buffer.from(blob.buffer, blob.byteOffset + 4, headerBytes).toString()) as Header;
  if (header.format !== FORMAT)
    throw new StoredFormatError(
      `counts result page of format ${header.format} (this version reads ${FORMAT})`,
    );
  if (header.whole) return header.whole;
  const n = header.rows;
  const rows: unknown[][] = Array.from({ length: n }, () => new Array<unknown>(header.columns.length));
  let at = blob.byteOffset + pad8(4 + headerBytes);
  header.columns.forEach((column, c) => {
    if (column.t === "json") {
      for (let i = 0; i < n; i++) rows[i][c] = column.values[i];
    } else if (column.t === "f64") {
      const values = new Float64Array(blob.buffer, at, n);
      for (let i = 0; i < n; i++) rows[i][c] = Number.isFinite(values[i]) ? values[i] : null;
      at += pad8(8 * n);
    } else {
      const values =
        column.t === "i32" ? new Int32Array(blob.buffer, at, n) : new Uint32Array(blob.buffer, at, n);
      const dict = column.t === "dict" ? column.values : null;
      for (let i = 0; i < n; i++) rows[i][c] = dict ? dict[values[i]] : values[i];
      at += pad8(4 * n);
    }
  });
  return rows;
}

function withHeader(header: Header, columns: (Int32Array | Float64Array | Uint32Array)[]): Buffer {
  const text = Buffer.from(JSON.stringify(header));
  const start = pad8(4 + text.length);
  const size = columns.reduce((sum, c) => sum + pad8(c.byteLength), start);
  const out = Buffer.alloc(size);
  out.writeUInt32LE(text.length, 0);
  text.copy(out, 4);
  let at = start;
  for (const c of columns) {
    out.set(new Uint8Array(c.buffer, c.byteOffset, c.byteLength), at);
    at += pad8(c.byteLength);
  }
  return out;
}
