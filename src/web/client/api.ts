/** The public Streetflow API as the page uses it. The key travels in a header, never in a URL. */

import type {
  Account,
  AnalysisEntry,
  Bbox,
  NetworkInfo,
  SegmentCollection,
  SessionInfo,
  ZoneSetSummary,
} from "../../shared/responses.js";

// The response types are shared with the server, which builds its bodies against them.
export type { Account, AnalysisEntry, Bbox, NetworkInfo, SegmentCollection, SessionInfo, ZoneSetSummary };

export type ZoneSetCollection = GeoJSON.FeatureCollection & ZoneSetSummary;

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
