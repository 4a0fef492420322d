import Database from "better-sqlite3";
const db = new Database("/tmp/streetflow-bench-counts-li-12m-schema13.sqlite", { readonly: true });
const ids = (db.prepare("SELECT DISTINCT segment_id FROM segment_month_totals WHERE country='li' LIMIT 1000").pluck().all()) as number[];
function time(label: string, f: () => unknown, n = 20) {
  f(); f();
  const t: number[] = [];
  for (let i = 0; i < n; i++) { const s = performance.now(); f(); t.push(performance.now() - s); }
  t.sort((a, b) => a - b);
  console.log(label, "p50", t[n >> 1].toFixed(2), "min", t[0].toFixed(2));
}
for (const table of ["segment_month_rollups", "segment_month_totals"]) {
  const sql = `SELECT segment_id, month, cells FROM ${table} WHERE country = ? AND segment_id IN (SELECT value FROM json_each(?)) AND month BETWEEN ? AND ?`;
  console.log(db.prepare("EXPLAIN QUERY PLAN " + sql).all("li", "[]", "a", "b").map((r: any) => r.detail).join(" | "));
  const st = db.prepare(sql).raw();
  time(`${table} month`, () => st.all("li", JSON.stringify(ids), "2025-01", "2025-01"));
  time(`${table} year`, () => st.all("li", JSON.stringify(ids), "2025-01", "2025-12"));
}
const st = db.prepare("SELECT length(cells) FROM segment_month_rollups LIMIT 3").pluck();
console.log(st.all());
console.log(db.pragma("page_size"), db.pragma("cache_size"));
