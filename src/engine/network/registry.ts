import { Network } from "./network.js";
import type { Segment } from "./types.js";

/**
 * Keeps one in-memory Network per country, built on first use from the
 * store's segments and dropped when a country is re-imported.
 */
export class NetworkRegistry {
  private readonly cache = new Map<string, Network | null>();

  constructor(private readonly load: (country: string) => Segment[]) {}

  get(country: string): Network | null {
    const code = country.toLowerCase();
    if (!this.cache.has(code)) {
      const segments = this.load(code);
      this.cache.set(code, segments.length > 0 ? new Network(code, segments) : null);
    }
    return this.cache.get(code)!;
  }

  /**
   * The pieces (in way order) of an OSM way in the first of `countries` whose
   * network holds it, or null. Ways are looked up by id only, so a border way
   * imported with two countries resolves to the first listed.
   */
  findWay(wayId: number, countries: readonly string[]): { country: string; segments: Segment[] } | null {
    for (const country of countries) {
      const segments = this.get(country)?.segmentsOfWay(wayId) ?? [];
      if (segments.length > 0) return { country: country.toLowerCase(), segments };
    }
    return null;
  }

  invalidate(country: string): void {
    this.cache.delete(country.toLowerCase());
  }
}
