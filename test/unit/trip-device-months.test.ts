import { describe, it } from "node:test";
import assert from "node:assert/strict";
import Database from "better-sqlite3";
import { migrate, MIGRATIONS } from "../../src/store/sqlite/migrations.js";

describe("devices per month (SQLite)", () => {
  it("are filled in by the migration from the device-days stored before it", () => {
    const db = new Database(":memory:");
    const step = MIGRATIONS.findIndex(
      (m) => typeof m === "string" && m.includes("CREATE TABLE trip_device_months"),
    );
    assert.ok(step > 0);
    for (const m of MIGRATIONS.slice(0, step))
      if (typeof m === "string") db.exec(m);
      else m(db);
    db.pragma(`user_version = ${step}`);
    const addDay = db.prepare(
      "INSERT INTO trip_device_days (country, day, vehicle_class, source, device_key) VALUES (?, ?, ?, ?, ?)",
    );
    const [a, b] = [Buffer.from("device-a"), Buffer.from("device-b")];
    // Device a on two days and in two classes of March, b in March and April; another country apart.
    addDay.run("de", "2026-03-01", "personal", "lbs", a);
    addDay.run("de", "2026-03-02", "personal", "lbs", a);
    addDay.run("de", "2026-03-02", "bicycle", "lbs", a);
    addDay.run("de", "2026-03-31", "personal", "lbs", b);
    addDay.run("de", "2026-04-01", "personal", "lbs", b);
    addDay.run("fr", "2026-03-01", "personal", "lbs", b);
    migrate(db);
    const months = db
      .prepare("SELECT country, month, COUNT(*) AS devices FROM trip_device_months GROUP BY country, month")
      .all();
    assert.deepEqual(months, [
      { country: "de", month: "2026-03", devices: 2 },
      { country: "de", month: "2026-04", devices: 1 },
      { country: "fr", month: "2026-03", devices: 1 },
    ]);
  });
});
