export type CsvValue = string | number | null;

/** RFC 4180 field: quoted only when it holds a comma, quote or line break. */
export function field(v: CsvValue): string {
  const s = v === null ? "" : String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** CSV text with a header row and CRLF-free "\n" line ends, ending in a newline. */
export function toCsv(header: readonly string[], rows: Iterable<readonly CsvValue[]>): string {
  const lines = [header.map(field).join(",")];
  for (const row of rows) lines.push(row.map(field).join(","));
  return `${lines.join("\n")}\n`;
}
