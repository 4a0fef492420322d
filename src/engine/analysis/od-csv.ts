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

/** The texts of the small whole numbers most cells hold: join() then copies them instead of formatting. */
const SMALL_NUMBERS = Array.from({ length: 4096 }, (_, i) => String(i));

/** A number as join() writes it (String(n)), from SMALL_NUMBERS when it is there. */
function numberText(n: number): string {
  return n >= 0 && n < SMALL_NUMBERS.length && Number.isInteger(n) ? SMALL_NUMBERS[n] : String(n);
}

/**
 * od_* CSV written row by row without an array or string per row: the label
 * fields are formatted once, a row's pieces go into a reused array that is
 * joined into one flat string every few thousand rows.
 */
/** The header line of an od_* CSV. */
export function odCsvHeader(): string {
  return `${OD_COLUMNS.map(field).join(",")}\n`;
}

export class OdCsvWriter {
  private readonly groups: string[];
  private readonly origins: string[];
  private readonly destinations: string[];
  private readonly dayTypes: string[];
  private readonly dayParts: string[];
  private readonly parts: string[];
  private readonly pieces: string[] = [];

  constructor(labels: OdLabels) {
    const zone = (z: ZoneDef) => [z.id, z.name, yesNo(z.isPass), directionOf(z)].map(field).join(",");
    this.groups = labels.groups.map((g) => `${field(g)},`);
    this.origins = labels.origins.map((z) => `${zone(z)},`);
    this.destinations = labels.destinations.map((z) => `${zone(z)},`);
    this.dayTypes = labels.dayTypes.map((d) => `${field(d)},`);
    this.dayParts = labels.dayParts.map((d) => `${field(d)},`);
    this.parts = [odCsvHeader()];
  }

  add(r: OdRow): void {
    const p = this.pieces;
    p.push(this.groups[r.group], this.origins[r.origin], this.destinations[r.destination]);
    p.push(this.dayTypes[r.dayType], this.dayParts[r.dayPart]);
    p.push(numberText(r.odTraffic), ",", numberText(r.originTraffic), ",");
    p.push(numberText(r.destinationTraffic), ",", numberText(r.avgDurationMin), "\n");
    if (p.length >= 16_384) this.flush();
  }

  /** The rows added since the last call, without the header (a run of rows of a merge part). */
  takeRows(): string {
    this.flush();
    const rows = this.parts.slice(1).join("");
    this.parts.length = 1;
    return rows;
  }

  /** The CSV text; the writer is spent. */
  finish(): string {
    this.flush();
    return this.parts.join("");
  }

  private flush(): void {
    this.parts.push(this.pieces.join(""));
    this.pieces.length = 0;
  }
}
