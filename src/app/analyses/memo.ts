/**
 * What a warm analysis thread keeps between the tasks of one analysis (its shards, then its merge):
 * values that cost CPU to build and do not change while the analysis runs, such as its compiled zones.
 * Entries are per analysis and per the object they were built from (the road network: a re-import
 * builds a new one, and the entry is built again). Only the `capacity` most recently used analyses
 * are kept, so a thread that ran shards of many analyses holds a bounded amount.
 */
export class AnalysisMemo {
  private readonly analyses = new Map<string, Map<string, { from: object; value: unknown }>>();

  constructor(private readonly capacity = 2) {}

  /** The value of `key` for the analysis, built by `make` from `from` unless already built from it. */
  async get<T>(analysisUuid: string, key: string, from: object, make: () => Promise<T>): Promise<T> {
    const entries = this.touch(analysisUuid);
    const kept = entries.get(key);
    if (kept && kept.from === from) return kept.value as T;
    const value = await make();
    entries.set(key, { from, value });
    return value;
  }

  /** Drops what is kept for an analysis (it finished here: no further task of it will come). */
  forget(analysisUuid: string): void {
    this.analyses.delete(analysisUuid);
  }

  /** Number of analyses with kept values. */
  get size(): number {
    return this.analyses.size;
  }

  /** The analysis' entries, now the most recently used; the least recently used beyond capacity go. */
  private touch(analysisUuid: string): Map<string, { from: object; value: unknown }> {
    const entries = this.analyses.get(analysisUuid) ?? new Map<string, { from: object; value: unknown }>();
    this.analyses.delete(analysisUuid);
    this.analyses.set(analysisUuid, entries);
    for (const oldest of this.analyses.keys()) {
      if (this.analyses.size <= this.capacity) break;
      this.analyses.delete(oldest);
    }
    return entries;
  }
}
