import { Network } from "./network.js";
import type { Segment } from "./types.js";

/**
 * Keeps one in-memory Network per country, built on first use from the
 * store's segments and dropped when a country is re-imported.
 */
export class NetworkRegistry {
  /** Promises, so concurrent first uses of a country share one load. */
  private readonly cache = new Map<string, Promise<Network | null>>();

  constructor(private readonly load: (country: string) => Promise<Segment[]> | Segment[]) {}

  get(country: string): Promise<Network | null> {
    const code = country.toLowerCase();
    let network = this.cache.get(code);
    if (!network) {
      network = this.build(code);
      this.cache.set(code, network);
      // A failed load is not cached: the next use tries again.
      void network.catch(() => this.cache.get(code) === network && this.cache.delete(code));
    }
    return network;
  }

  private async build(code: string): Promise<Network | null> {
    const segments = await this.load(code);
    return segments.length > 0 ? new Network(code, segments) : null;
  }

  /**
   * The pieces (in way order) of an OSM way in the first of `countries` whose
   * network holds it, or null. Ways are looked up by id only, so a border way
   * imported with two countries resolves to the first listed.
   */
  async findWay(
    wayId: number,
    countries: readonly string[],
  ): Promise<{ country: string; segments: Segment[] } | null> {
    for (const country of countries) {
      const segments = (await this.get(country))?.segmentsOfWay(wayId) ?? [];
      if (segments.length > 0) return { country: country.toLowerCase(), segments };
    }
    return null;
  }

  invalidate(country: string): void {
    this.cache.delete(country.toLowerCase());
  }
}
