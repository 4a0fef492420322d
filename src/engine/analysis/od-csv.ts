import type { ZoneDef } from "../zones/compile.js";
import { field, type CsvValue } from "./csv.js";
import type { OdRow } from "./od-aggregate.js";

/** Columns of od_all / od_pers / od_comm, in the vendor interface's order. */
export const OD_COLUMNS = [
  "device_type",
  "origin_zone_id",
  "origin_zone_name",
  "origin_zone_is_pass_through",
  "origin_zone_direction",
  "destination_zone_id",
  "destination_zone_name",
  "destination_zone_is_pass_through",
  "destination_zone_direction",
  "day_type",
  "day_part",
  "o_d_traffic",
  "origin_zone_traffic",
  "destination_zone_traffic",
  "avg_trip_duration",
] as const;

export interface OdLabels {
  /** Device-type name of each aggregation group, e.g. "All Vehicles". */
  groups: string[];
  origins: ZoneDef[];
  destinations: ZoneDef[];
  /** e.g. "0: Average Day (M-Su)" */
  dayTypes: string[];
  /** e.g. "2: Peak AM (6am-10am)" */
  dayParts: string[];
}

const yesNo = (b: boolean) => (b ? "yes" : "no");
const directionOf = (z: ZoneDef): CsvValue => (z.direction === null ? "N/A" : z.direction);

/** The columns naming a row's device type, zones, day type and day part (OD_COLUMNS up to day_part). */
export const OD_IDENTITY_COLUMNS = OD_COLUMNS.slice(0, 11);

export function odIdentity(
  r: Pick<OdRow, "group" | "origin" | "destination" | "dayType" | "dayPart">,
  labels: OdLabels,
): CsvValue[] {
  const o = labels.origins[r.origin];
  const d = labels.destinations[r.destination];
  return [
    labels.groups[r.group],
    o.id,
    o.name,
    yesNo(o.isPass),
    directionOf(o),
    d.id,
    d.name,
    yesNo(d.isPass),
    directionOf(d),
    labels.dayTypes[r.dayType],
    labels.dayParts[r.dayPart],
  ];
}

export function odCsv(rows: Iterable<OdRow>, labels: OdLabels): string {
  const writer = new OdCsvWriter(labels);
  for (const r of rows) writer.add(r);
  return writer.finish();
}

/** The header line of an od_* CSV. */
export function odCsvHeader(): string {
  return `${OD_COLUMNS.map(field).join(",")}\n`;
}

/** Bytes a writer fills before it turns them into text. */
const BLOCK_BYTES = 1 << 20;
/** Longest text of a number: String(-1.2345678901234567e-308) has 24 characters. */
const NUMBER_BYTES = 24;
const COMMA = 44;
const NEWLINE = 10;
const ZERO = 48;

/** Texts as UTF-8 bytes back to back: text i is bytes[start[i] .. start[i + 1]]. */
class EncodedTexts {
  readonly bytes: Uint8Array;
  readonly start: Int32Array;
  readonly longest: number;
  readonly ascii: boolean;

  constructor(texts: readonly string[]) {
    const encoded = texts.map((t) => Buffer.from(t, "utf8"));
    this.start = new Int32Array(encoded.length + 1);
    encoded.forEach((b, i) => (this.start[i + 1] = this.start[i] + b.length));
    this.bytes = Buffer.concat(encoded);
    this.longest = encoded.reduce((n, b) => Math.max(n, b.length), 0);
    this.ascii = this.bytes.every((b) => b < 0x80);
  }
}

/**
 * od_* CSV written row by row into a reused block of bytes: the label fields are encoded once, the
 * numbers written digit by digit, and each full block becomes one string (one copy, no string per
 * field: joining 1.5 M rows' ~15 strings each cost more than the rest of the CSV). Rows never
 * straddle a block, so UTF-8 sequences stay whole.
 */
export class OdCsvWriter {
  private readonly groups: EncodedTexts;
  private readonly origins: EncodedTexts;
  private readonly destinations: EncodedTexts;
  private readonly dayTypes: EncodedTexts;
  private readonly dayParts: EncodedTexts;
  private readonly block: Buffer;
  private at = 0;
  /** A row that starts at or before this offset fits in the block. */
  private readonly lastRowStart: number;
  private readonly encoding: "latin1" | "utf8";
  private readonly parts: string[];
  /** Full blocks' bytes kept as bytes (takeRowBytes), when `bytes`: no text is made of them. */
  private byteParts: Uint8Array[] = [];

  /** `bytes`: the rows are taken as UTF-8 bytes (takeRowBytes), not as text. */
  constructor(
    labels: OdLabels,
    private readonly bytes = false,
  ) {
    const zone = (z: ZoneDef) => [z.id, z.name, yesNo(z.isPass), directionOf(z)].map(field).join(",");
    const texts = (values: string[]) => new EncodedTexts(values.map((v) => `${v},`));
    this.groups = texts(labels.groups.map(field));
    this.origins = texts(labels.origins.map(zone));
    this.destinations = texts(labels.destinations.map(zone));
    this.dayTypes = texts(labels.dayTypes.map(field));
    this.dayParts = texts(labels.dayParts.map(field));
    const all = [this.groups, this.origins, this.destinations, this.dayTypes, this.dayParts];
    const longestRow = all.reduce((n, t) => n + t.longest, 0) + 4 * (NUMBER_BYTES + 1);
    this.block = Buffer.allocUnsafeSlow(Math.max(BLOCK_BYTES, 2 * longestRow));
    this.lastRowStart = this.block.length - longestRow;
    // Latin-1 decoding copies bytes straight into a one-byte string; it reads ASCII as UTF-8 does.
    this.encoding = all.every((t) => t.ascii) ? "latin1" : "utf8";
    this.parts = [odCsvHeader()];
  }

  add(r: OdRow): void {
    if (this.at > this.lastRowStart) this.flush();
    this.put(this.groups, r.group);
    this.put(this.origins, r.origin);
    this.put(this.destinations, r.destination);
    this.put(this.dayTypes, r.dayType);
    this.put(this.dayParts, r.dayPart);
    this.putNumber(r.odTraffic);
    this.block[this.at++] = COMMA;
    this.putNumber(r.originTraffic);
    this.block[this.at++] = COMMA;
    this.putNumber(r.destinationTraffic);
    this.block[this.at++] = COMMA;
    this.putNumber(r.avgDurationMin);
    this.block[this.at++] = NEWLINE;
  }

  /** The rows added since the last call, without the header (a run of rows of a merge part). */
  takeRows(): string {
    this.flush();
    const rows = this.parts.slice(1).join("");
    this.parts.length = 1;
    return rows;
  }

  /**
   * The rows added since the last call as UTF-8 bytes, in blocks (a merge part's run, stored as bytes:
   * no string is made, copied to another thread and encoded again). Only for a writer made with `bytes`.
   */
  takeRowBytes(): Uint8Array[] {
    this.flush();
    const rows = this.byteParts;
    this.byteParts = [];
    return rows;
  }

  /** The CSV text; the writer is spent. */
  finish(): string {
    this.flush();
    return this.parts.join("");
  }

  private put(texts: EncodedTexts, i: number): void {
    const { bytes } = texts;
    const block = this.block;
    let at = this.at;
    for (let k = texts.start[i], end = texts.start[i + 1]; k < end; k++) block[at++] = bytes[k];
    this.at = at;
  }

  /** The number as String(n) writes it: whole numbers digit by digit, others through String. */
  private putNumber(n: number): void {
    const block = this.block;
    if (!(n >= 0 && n <= Number.MAX_SAFE_INTEGER && Number.isInteger(n))) {
      this.at += block.write(String(n), this.at, "latin1");
      return;
    }
    let digits = 1;
    for (let p = 10; p <= n; p *= 10) digits++;
    // -0 is written "0", as String(-0) is.
    let v = Math.abs(n);
    for (let k = this.at + digits - 1; k >= this.at; k--) {
      const q = Math.floor(v / 10);
      block[k] = ZERO + v - q * 10;
      v = q;
    }
    this.at += digits;
  }

  private flush(): void {
    if (this.at === 0) return;
    if (this.bytes) this.byteParts.push(new Uint8Array(this.block.subarray(0, this.at)));
    else this.parts.push(this.block.toString(this.encoding, 0, this.at));
    this.at = 0;
  }
}
