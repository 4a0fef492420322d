import type { AdminArea } from "../engine/network/admin-areas.js";
import type { PresetArea } from "./records.js";
import { fail } from "./errors.js";

/**
 * The vendor's census geographies (US/Canada). Streetflow has no census units; `zip` is served
 * from OSM postal-code boundaries where the extract has them, the others are never available.
 */
const CENSUS_GEOGRAPHY_TYPES = ["zip", "taz", "blkgrp", "da"];

/** `admin_N` for an administrative boundary of level N, `zip` for a postal-code boundary. */
export function geographyTypeOf(area: AdminArea): string {
  return area.kind === "postal_code" ? "zip" : `admin_${area.adminLevel}`;
}

/**
 * The imported boundaries as preset areas. A postal-code area is known by its code (the id a
 * planner reads in results); one without a code, and every administrative area, by its OSM id.
 */
export function presetAreasOf(country: string, areas: readonly AdminArea[]): PresetArea[] {
  return areas.map((a) => ({
    country,
    geographyType: geographyTypeOf(a),
    areaId: a.kind === "postal_code" && a.postalCode ? a.postalCode : String(a.osmId),
    osmId: a.osmId,
    name: a.name ?? a.postalCode,
    geometry: a.geometry,
  }));
}

/**
 * What the rules read of the imported preset areas: the geography types of a country with their area
 * counts. Defined here so the domain needs no store port; the store's `PresetAreaRepo` satisfies it.
 */
export interface GeographyTypes {
  types(country: string): Promise<readonly { geographyType: string; areas: number }[]>;
}

/**
 * A requested `geography_type`, matched case-insensitively against the types imported for the
 * country; anything else is a 400 that lists the valid ones.
 */
export async function resolveGeographyType(
  repo: GeographyTypes,
  country: string,
  requested: string,
  field = "geography_type",
): Promise<string> {
  const value = requested.trim().toLowerCase();
  const valid = (await repo.types(country.toLowerCase())).map((t) => t.geographyType);
  if (valid.includes(value)) return value;
  const listed = valid.length > 0 ? valid.join(", ") : "none (the network was imported without boundaries)";
  const census =
    CENSUS_GEOGRAPHY_TYPES.includes(value) && value !== "zip"
      ? ` ("${value}" is a US/Canadian census unit)`
      : "";
  throw fail("unknown_geography_type", { requested, country, census, valid: listed }, field);
}

/** What `GET /preset_geographies/{country}` lists: each geography type with its area count. */
export async function listPresetGeographies(
  repo: GeographyTypes,
  importedCountries: readonly string[],
  country: string,
): Promise<{ geographyType: string; areas: number; description: string }[]> {
  const code = country.toLowerCase();
  if (!importedCountries.includes(code)) throw fail("unknown_country", { country }, "country");
  return (await repo.types(code)).map((t) => ({ ...t, description: describe(t.geographyType) }));
}

function describe(geographyType: string): string {
  if (geographyType === "zip") return "postal-code areas (OSM boundary=postal_code)";
  return `administrative areas of OSM admin_level ${geographyType.slice("admin_".length)}`;
}
