import type { Bbox, SegmentCollection, StreetflowApi } from "../../api.js";
import { collectPages, type PagedAnswer } from "./paging.js";
import type { CountsResult, RoadInfo, SegmentMetrics } from "./result.js";
import {
  metricsBody,
  monthlyBody,
  recordsOf,
  requestKey,
  selectionBody,
  type CountsFilters,
  type CountsQuery,
  type LonLat,
} from "./query.js";

export interface DateRanges {
  months: { month: number; year: number }[];
  years: { year: number }[];
}

export type { Place } from "../../../../shared/responses.js";
import type { Place } from "../../../../shared/responses.js";

export interface MonthMetrics {
  year_month: string;
  trips_volume: number;
  avg_speed: number | null;
}

/**
 * Typed calls of the counts interface and the place search. Answers are kept per request body for the
 * page's lifetime: /metrics is charged per call, so asking the same question twice must not cost twice
 * (the interface itself advises callers to keep metric results).
 */
export class CountsApi {
  private readonly cache = new Map<string, Promise<unknown>>();

  constructor(private readonly api: StreetflowApi) {}

  dateRanges(country: string, mode: string): Promise<DateRanges> {
    const path = `/counts/v1/date_ranges/${encodeURIComponent(country)}/${encodeURIComponent(mode)}`;
    return this.once(path, undefined, () => this.api.request("GET", path));
  }

  async places(country: string, q: string, limit = 8): Promise<Place[]> {
    const query = new URLSearchParams({ q, limit: String(limit) });
    const path = `/api/v2/networks/${encodeURIComponent(country)}/places?${query}`;
    const answer = await this.once<{ places: Place[] }>(path, undefined, () => this.api.request("GET", path));
    return answer.places;
  }

  /** Segments the selection yields (free): what a metrics call over it will be charged for, per field. */
  async segmentCount(q: Pick<CountsQuery, "country" | "mode" | "point" | "radiusM">): Promise<number> {
    const body = selectionBody(q);
    const answer = await this.post<{ segment_count: number }>("/counts/v1/segmentcount", body);
    return answer.segment_count;
  }

  /** The month's metrics of every segment in the circle, and the lines to draw them with. */
  async counts(q: CountsQuery): Promise<CountsResult> {
    const [metrics, geometry] = await Promise.all([
      this.paged("/counts/v1/metrics", metricsBody(q)),
      this.paged("/counts/v1/geometry", selectionBody(q)),
    ]);
    const lines = new Map<number, LonLat[]>();
    for (const [id, line] of geometry.data as [number, { coordinates: LonLat[] }][])
      lines.set(id, line.coordinates);
    return { metrics: recordsOf<SegmentMetrics>(metrics.columns, metrics.data), lines };
  }

  /** True when `counts(q)` would answer from this page's results (and so cost nothing). */
  hasCounts(q: CountsQuery): boolean {
    return this.cache.has(requestKey("/counts/v1/metrics", metricsBody(q)));
  }

  /** A segment's months with data over `years`, oldest first: one charged call per year. */
  async monthly(f: CountsFilters, segmentId: number, years: number[]): Promise<MonthMetrics[]> {
    const answers = await Promise.all(
      years.map((year) => this.paged("/counts/v1/metrics", monthlyBody(f, segmentId, year))),
    );
    return answers
      .flatMap((a) => recordsOf<MonthMetrics>(a.columns, a.data))
      .sort((a, b) => a.year_month.localeCompare(b.year_month));
  }

  /** Names and classes of the roads in a box (the counts interface answers ids and lines only). */
  async roads(country: string, bbox: Bbox): Promise<RoadInfo> {
    const segments: SegmentCollection = await this.api.segments(country, bbox);
    return new Map(
      segments.features.map(({ properties: p }) => [
        p.segment_id,
        { name: p.name, road_class: p.road_class },
      ]),
    );
  }

  private paged(path: string, body: unknown): Promise<PagedAnswer> {
    return this.once(path, body, async () =>
      collectPages(await this.api.request<PagedAnswer>("POST", path, body), (url) =>
        this.api.request<PagedAnswer>("GET", url),
      ),
    );
  }

  private post<T>(path: string, body: unknown): Promise<T> {
    return this.once(path, body, () => this.api.request<T>("POST", path, body));
  }

  /** One request per key; a failed one is forgotten so it can be retried. */
  private once<T>(path: string, body: unknown, run: () => Promise<T>): Promise<T> {
    const key = requestKey(path, body);
    let answer = this.cache.get(key) as Promise<T> | undefined;
    if (!answer) {
      answer = run();
      this.cache.set(key, answer);
      answer.catch(() => this.cache.delete(key));
    }
    return answer;
  }
}
