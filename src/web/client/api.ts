/** The public Streetflow API as the page uses it. The key travels in a header, never in a URL. */

export type Bbox = [number, number, number, number];

export interface NetworkInfo {
  country: string;
  segment_count: number;
  imported_at: string;
  bbox: Bbox;
}

export interface SegmentCollection {
  type: "FeatureCollection";
  features: GeoJSON.Feature<
    GeoJSON.LineString,
    { segment_id: number; road_class: string; name: string | null }
  >[];
  total: number;
  truncated: boolean;
}

export interface ZoneSetSummary {
  name: string;
  uuid: string;
  geom_type: string;
  zone_count: number;
  created_at: string;
}

export type ZoneSetCollection = GeoJSON.FeatureCollection & ZoneSetSummary;

export interface AnalysisEntry {
  name: string;
  uuid: string;
  status: string;
  progress: number;
  analysis_type: string;
  travel_mode_type: string;
  created_at: string;
  failure_reason?: string;
}

/** A failed request, with the API's error code and message when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class StreetflowApi {
  constructor(private readonly key: string) {}

  listNetworks(): Promise<NetworkInfo[]> {
    return this.get<{ networks: NetworkInfo[] }>("/api/v2/networks").then((r) => r.networks);
  }

  segments(country: string, bbox: Bbox): Promise<SegmentCollection> {
    const query = new URLSearchParams({ bbox: bbox.map((v) => v.toFixed(6)).join(",") });
    return this.get(`/api/v2/networks/${encodeURIComponent(country)}/segments?${query}`);
  }

  listZoneSets(): Promise<ZoneSetSummary[]> {
    return this.get<{ zone_sets: ZoneSetSummary[] }>("/api/v2/zone_sets").then((r) => r.zone_sets);
  }

  zoneSet(uuid: string): Promise<ZoneSetCollection> {
    return this.get(`/api/v2/zone_sets/${encodeURIComponent(uuid)}`);
  }

  listAnalyses(): Promise<AnalysisEntry[]> {
    return this.get<{ analyses: AnalysisEntry[] }>("/api/v2/analyses").then((r) => r.analyses);
  }

  private async get<T>(path: string): Promise<T> {
    let response: Response;
    try {
      response = await fetch(path, { headers: { "x-stl-key": this.key, accept: "application/json" } });
    } catch {
      throw new ApiError(0, "network_error", "The server could not be reached.");
    }
    if (response.ok) return (await response.json()) as T;
    const body = (await response.json().catch(() => null)) as {
      error?: { code: string; message: string };
    } | null;
    throw new ApiError(
      response.status,
      body?.error?.code ?? "http_error",
      body?.error?.message ?? `The server answered ${response.status}.`,
    );
  }
}
