import { Network } from "./network.js";
import type { Segment } from "./types.js";

/** How a registry learns that a country was imported again, possibly by another process. */
export interface NetworkFreshness {
  /** The country's current import stamp (for example its import time), or null when it has no network. */
  stampOf(country: string): Promise<string | null>;
  /** A loaded network is trusted this long before its stamp is read again; 0 reads it on every use. */
  recheckMs: number;
}

interface Loaded {
  network: Promise<Network | null>;
  /** The stamp read just before the load; undefined without a freshness source. */
  stamp: string | null | undefined;
  checkedAt: number;
}

/**
 * Keeps one in-memory Network per country, built on first use from the store's segments. It is dropped
 * when the country is imported again: at once through `invalidate` in the importing process, and within
 * `recheckMs` anywhere else (other threads and processes) when a freshness source is given.
 */
export class NetworkRegistry {
  /** Promises, so concurrent first uses of a country share one load. */
  private readonly cache = new Map<string, Loaded>();
  /** Stamp reads in flight, so concurrent uses share one. */
  private readonly checks = new Map<string, Promise<void>>();

  constructor(
    private readonly load: (country: string) => Promise<Segment[]> | Segment[],
    private readonly freshness?: NetworkFreshness,
  ) {}

  async get(country: string): Promise<Network | null> {
    const code = country.toLowerCase();
    const cached = this.cache.get(code);
    if (cached && this.isDue(cached)) await this.recheck(code, cached);
    return await (this.cache.get(code) ?? this.startLoad(code)).network;
  }

  private isDue(loaded: Loaded): boolean {
    return this.freshness !== undefined && Date.now() - loaded.checkedAt >= this.freshness.recheckMs;
  }

  private recheck(code: string, loaded: Loaded): Promise<void> {
    let check = this.checks.get(code);
    if (!check) {
      check = this.readStamp(code)
        .then((stamp) => {
          if (this.cache.get(code) !== loaded) return;
          if (stamp === loaded.stamp) loaded.checkedAt = Date.now();
          else this.cache.delete(code);
        })
        .finally(() => this.checks.delete(code));
      this.checks.set(code, check);
    }
    return check;
  }

  private async readStamp(code: string): Promise<string | null | undefined> {
    return this.freshness ? await this.freshness.stampOf(code) : undefined;
  }

  /** Starts loading the country (synchronously registered, so concurrent first uses share the load). */
  private startLoad(code: string): Loaded {
    const loaded: Loaded = { network: Promise.resolve(null), stamp: undefined, checkedAt: Date.now() };
    // The stamp is read before the segments, so an import between the two only causes one reload more.
    loaded.network = this.readStamp(code).then(async (stamp) => {
      loaded.stamp = stamp;
      return await this.build(code);
    });
    this.cache.set(code, loaded);
    // A failed load is not cached: the next use tries again.
    void loaded.network.catch(() => this.cache.get(code) === loaded && this.cache.delete(code));
    return loaded;
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

  /** Drops the country's network at once (the importing process calls it). */
  invalidate(country: string): void {
    this.cache.delete(country.toLowerCase());
  }
}
