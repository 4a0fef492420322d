/** The public Streetflow API as the page uses it. The key travels in a header, never in a URL. */

export type Bbox = [number, number, number, number];

export interface NetworkInfo {
  country: string;
  segment_count: number;
  imported_at: string;
  /** IANA zone of the network's local clock (day types and parts). */
  time_zone: string;
  bbox: Bbox;
  /** `YYYY-MM` of the latest month with stored trips; null without trips. */
  last_trip_month: string | null;
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
  /** [w, s, e, n] of the zones (in the list only). */
  bbox?: Bbox | null;
}

export type ZoneSetCollection = GeoJSON.FeatureCollection & ZoneSetSummary;

export interface AnalysisEntry {
  name: string;
  uuid: string;
  status: string;
  progress: number;
  analysis_type: string;
  travel_mode_type: string;
  /** The road network it runs on. */
  country: string;
  created_at: string;
  /** The metrics that can be downloaded (empty until Data Available). */
  metrics: string[];
  /** The shapefiles (zips) that can be downloaded, like metrics (Data Available only). */
  shapefiles?: string[];
  /** The organization's tags this analysis carries. */
  tags: string[];
  failure_reason?: string;
}

export interface Account {
  organization: { name: string };
  key: { prefix: string; label: string | null };
  users: { email: string }[];
}

/** A failed request, with the API's error code and message when it sent one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The request field at fault, when the API names one (validation errors). */
    readonly field?: string,
    /** Every problem of a rejected body (400 validation_failed), each at its field path. */
    readonly issues: { field: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** The signed-in user of a web session (GET /auth/session, POST /auth/sign-in). */
export interface SessionInfo {
  user: { email: string; role: "admin" | "analyst" | "viewer" };
  organization: { name: string };
  csrf_token: string;
}

/**
 * How the page authenticates: an API key in a header, or the session cookie (sent by the browser) with the
 * session's CSRF token on every state-changing request.
 */
export type Credentials = { key: string } | { csrfToken: string };

export class StreetflowApi {
  constructor(private readonly credentials: Credentials) {}

  /** A session API for the signed-in user, or null when the page has no session. */
  static async fromSession(): Promise<{ api: StreetflowApi; session: SessionInfo } | null> {
    const response = await fetch("/auth/session", { headers: { accept: "application/json" } });
    if (!response.ok) return null;
    const session = (await response.json()) as SessionInfo;
    return { api: new StreetflowApi({ csrfToken: session.csrf_token }), session };
  }

  static async signIn(
    email: string,
    password: string,
  ): Promise<{ api: StreetflowApi; session: SessionInfo }> {
    const session = await new StreetflowApi({ csrfToken: "" }).request<SessionInfo>("POST", "/auth/sign-in", {
      email,
      password,
    });
    return { api: new StreetflowApi({ csrfToken: session.csrf_token }), session };
  }

  /** Sets a password with a one-time reset link's token; answers the account's e-mail. */
  static async resetPassword(token: string, password: string): Promise<string> {
    const api = new StreetflowApi({ csrfToken: "" });
    return (await api.request<{ email: string }>("POST", "/auth/reset", { token, password })).email;
  }

  get usesSession(): boolean {
    return "csrfToken" in this.credentials;
  }

  signOut(): Promise<unknown> {
    return this.request("POST", "/auth/sign-out");
  }

  account(): Promise<Account> {
    return this.get("/api/v2/account");
  }

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

  /** The organization's analyses; with a tag, only those carrying it. */
  listAnalyses(tag?: string): Promise<AnalysisEntry[]> {
    const query = tag ? `?${new URLSearchParams({ tag })}` : "";
    return this.get<{ analyses: AnalysisEntry[] }>(`/api/v2/analyses${query}`).then((r) => r.analyses);
  }

  /**
   * Any call of the public API, for views that keep their own typed wrappers (analyses, counts, zone
   * editing). JSON in and out; a non-2xx answer becomes an ApiError with the API's code and message.
   */
  async request<T>(
    method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
    path: string,
    body?: unknown,
  ): Promise<T> {
    const response = await this.send(method, path, body);
    return (await response.json()) as T;
  }

  /** A file the API sends (metric CSVs): its text and the name the server suggests. */
  async download(path: string): Promise<{ text: string; filename: string | null }> {
    const response = await this.send("GET", path, undefined, "text/csv, */*");
    const disposition = response.headers.get("content-disposition") ?? "";
    const filename = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? null;
    return { text: await response.text(), filename };
  }

  /** A binary file the API sends (shapefile zips) and the name the server suggests. */
  async downloadBlob(path: string): Promise<{ blob: Blob; filename: string | null }> {
    const response = await this.send("GET", path, undefined, "application/zip, */*");
    const disposition = response.headers.get("content-disposition") ?? "";
    const filename = /filename="?([^";]+)"?/.exec(disposition)?.[1] ?? null;
    return { blob: await response.blob(), filename };
  }

  private get<T>(path: string): Promise<T> {
    return this.request<T>("GET", path);
  }

  private async send(method: string, path: string, body: unknown, accept = "application/json") {
    const headers: Record<string, string> = { accept };
    if ("key" in this.credentials) headers["x-stl-key"] = this.credentials.key;
    else if (method !== "GET") headers["x-csrf-token"] = this.credentials.csrfToken;
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError(0, "network_error", "The server could not be reached.");
    }
    if (response.ok) return response;
    const error = (await response.json().catch(() => null)) as {
      error?: {
        code: string;
        message: string;
        field?: string;
        issues?: { field: string; message: string }[];
      };
    } | null;
    throw new ApiError(
      response.status,
      error?.error?.code ?? "http_error",
      error?.error?.message ?? `The server answered ${response.status}.`,
      error?.error?.field,
      error?.error?.issues,
    );
  }
}
