/** RFC 4180 CSV reading for the metric downloads; DOM-free so it is unit-tested under Node. */

/** Rows of fields: quoted fields may hold commas, doubled quotes and line breaks; CRLF or LF line ends. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = "";
  };
  const endRow = () => {
    endField();
    rows.push(row);
    row = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c !== '"') field += c;
      else if (text[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ",") endField();
    else if (c === "\n") endRow();
    else if (c !== "\r") field += c;
  }
  // The last line needs no line end.
  if (field !== "" || row.length > 0) endRow();
  return rows;
}

/** A CSV with a header row as records keyed by column name. */
export function csvRecords(text: string): { columns: string[]; records: Record<string, string>[] } {
  const [columns = [], ...rows] = parseCsv(text);
  const records = rows.map((cells) => Object.fromEntries(columns.map((c, i) => [c, cells[i] ?? ""])));
  return { columns, records };
}
