import type Database from "better-sqlite3";
import type { PresetArea } from "../../domain/records.js";
import type { PresetAreaRepo } from "../../app/ports/store.js";
import type { Sync } from "./async-port.js";
import { toPresetArea, type PresetAreaRow } from "../rows.js";

export class SqlitePresetAreas implements Sync<PresetAreaRepo> {
  constructor(private readonly db: Database.Database) {}

  replaceCountry(country: string, areas: readonly PresetArea[]): void {
    const insert = this.db.prepare(
      `INSERT OR REPLACE INTO preset_areas (country, geography_type, area_id, osm_id, name, geometry)
       VALUES (?, ?, ?, ?, ?, ?)`,
    );
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM preset_areas WHERE country = ?").run(country);
      for (const a of areas)
        insert.run(country, a.geographyType, a.areaId, a.osmId, a.name, JSON.stringify(a.geometry));
    })();
  }

  types(country: string): { geographyType: string; areas: number }[] {
    const rows = this.db
      .prepare(
        `SELECT geography_type, COUNT(*) AS areas FROM preset_areas WHERE country = ?
         GROUP BY geography_type ORDER BY geography_type`,
      )
      .all(country) as { geography_type: string; areas: number }[];
    return rows.map((r) => ({ geographyType: r.geography_type, areas: r.areas }));
  }

  list(country: string, geographyType: string): PresetArea[] {
    const rows = this.db
      .prepare("SELECT * FROM preset_areas WHERE country = ? AND geography_type = ? ORDER BY area_id")
      .all(country, geographyType) as PresetAreaRow[];
    return rows.map(toPresetArea);
  }
}
