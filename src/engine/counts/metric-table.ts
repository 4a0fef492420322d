/**
 * A metrics answer as columns, one per requested field: a year over 1,000 segments is 12,000 rows, and
 * as one array of values each (with a boxed number per decimal) they were half of the call's garbage,
 * though only the first page of them is ever written as JSON and the rest stored as columns anyway.
 */

/** Numbers (NaN for null), strings by a dictionary, or any values (shares, mixed). */
export type MetricColumn =
  | { kind: "number"; values: Float64Array }
  | { kind: "text"; dict: readonly string[]; ids: Uint32Array }
  | { kind: "any"; values: readonly unknown[] };

export interface MetricTable {
  length: number;
  columns: MetricColumn[];
}

/** Rows `from` … `to - 1` of a table: what one stored page holds. */
export interface TableSlice {
  table: MetricTable;
  from: number;
  to: number;
}

/**
 * Rows of equal width as columns: all-number-or-null columns as numbers, all-string ones by dictionary,
 * the rest as they are. (A plug-in provider's rows, and the geometry answer.)
 */
export function tableOfRows(rows: readonly (readonly unknown[])[], width: number): MetricTable {
  const columns: MetricColumn[] = [];
  for (let c = 0; c < width; c++) columns.push(columnOfRows(rows, c));
  return { length: rows.length, columns };
}

function columnOfRows(rows: readonly (readonly unknown[])[], c: number): MetricColumn {
  let [numbers, strings] = [true, true];
  for (const row of rows) {
    const v = row[c];
    // NaN and ±Infinity are written as null by JSON: a number column would do the same, but a value
    // that is null in the rows would read back as a number there. Keep such columns as they are.
    if (typeof v === "number" && Number.isFinite(v)) strings = false;
    else if (v === null) strings = false;
    else if (typeof v === "string") numbers = false;
    else [numbers, strings] = [false, false];
  }
  if (numbers && rows.length > 0) {
    const values = new Float64Array(rows.length);
    for (let i = 0; i < rows.length; i++) values[i] = (rows[i][c] as number | null) ?? NaN;
    return { kind: "number", values };
  }
  if (strings && rows.length > 0) {
    const index = new Map<string, number>();
    const ids = new Uint32Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const v = rows[i][c] as string;
      let id = index.get(v);
      if (id === undefined) index.set(v, (id = index.size));
      ids[i] = id;
    }
    return { kind: "text", dict: [...index.keys()], ids };
  }
  return { kind: "any", values: rows.map((r) => r[c]) };
}

/** Row `i`'s value of a column, as the rows held it (null for a number column's NaN). */
export function cellOf(column: MetricColumn, i: number): unknown {
  switch (column.kind) {
    case "number": {
      const v = column.values[i];
      return v === v ? v : null;
    }
    case "text":
      return column.dict[column.ids[i]];
    case "any":
      return column.values[i];
  }
}

/**
 * Rows `from` … `to - 1` as JSON text (an array of arrays), byte for byte what JSON.stringify writes for
 * them: the rows of this page only (the answered one, at most a page), then one JSON.stringify. Measured
 * on a page of 1,000 × 6: 0.5 ms and 250 KB, against 0.7–1.0 ms and 285 KB for one reused row array
 * written per row and joined, and 530 KB for text concatenated value by value.
 */
export function tableJson(table: MetricTable, from = 0, to = table.length): string {
  return JSON.stringify(sliceRows({ table, from, to }));
}

/** The rows of a slice, as the rows a table was made of held them (null for a number column's NaN). */
export function sliceRows({ table, from, to }: TableSlice): unknown[][] {
  const { columns } = table;
  const rows = new Array<unknown[]>(Math.max(0, to - from));
  for (let i = from; i < to; i++) {
    const row = new Array<unknown>(columns.length);
    for (let c = 0; c < columns.length; c++) row[c] = cellOf(columns[c], i);
    rows[i - from] = row;
  }
  return rows;
}
