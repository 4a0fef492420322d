/**
 * Every error code Streetflow answers, with its HTTP status and message template: the one place codes are
 * written. Errors are raised by code (`throw fail("unknown_country", { country })`, `src/domain/errors.ts`).
 *
 * Templates name their parameters as `<name>`, never with braces: clients format messages as templates
 * themselves (`{name}` is a placeholder there). `<reason>` carries the specific rule broken where one code
 * covers several (all the problems of a geometry are `invalid_geometry`).
 *
 * docs/api-conventions.md lists the same table; test/unit/error-catalogue.test.ts fails when they drift.
 * Codes are published: never rename one (clients branch on them); add new ones.
 */
export const ERROR_CATALOGUE = {
  // 400: the request is malformed or breaks a rule
  bad_request: { status: 400, message: "<reason>" },
  invalid_request: { status: 400, message: "<reason>" },
  validation_failed: { status: 400, message: "<issues>" },
  invalid_url: { status: 400, message: "<reason>" },
  invalid_json: { status: 400, message: "<reason>" },
  invalid_content_length: { status: 400, message: "Content-Length does not match the body" },
  invalid_basemap_url: { status: 400, message: "STREETFLOW_BASEMAP_URL <reason>: <url>" },
  invalid_rate_limit: {
    status: 400,
    message: "STREETFLOW_RATE_LIMIT must be a whole number of at least 1",
  },
  invalid_shard_trips: {
    status: 400,
    message: "STREETFLOW_SHARD_TRIPS must be a whole number (0: analyses are not split into shards)",
  },
  invalid_option: { status: 400, message: "<reason>" },
  invalid_batch_size: { status: 400, message: "--batch-size must be a positive whole number" },
  invalid_threads: { status: 400, message: "--threads must be a positive whole number" },
  invalid_chunk_trips: {
    status: 400,
    message:
      "--chunk-trips (STREETFLOW_INGEST_CHUNK_TRIPS) must be a whole number (0: the ingest is not split into chunks)",
  },
  invalid_country: { status: 400, message: 'country code "<country>" must be 2 or 3 letters' },
  invalid_role: { status: 400, message: "the role is admin, analyst or viewer" },
  invalid_quota: { status: 400, message: 'units must be a whole number or "none", not "<text>"' },
  unsupported_file: { status: 400, message: "<file>: <reason>" },
  unsupported_osm_file: {
    status: 400,
    message: 'unknown OSM file type "<file>": expected .osm.pbf, .osm or .osm.gz',
  },
  invalid_osm_file: { status: 400, message: 'cannot read OSM file "<file>": <reason>' },
  unknown_trace_format: { status: 400, message: "<file>: expected <formats>" },
  invalid_trace_file: { status: 400, message: "<file>: <reason>" },
  invalid_email: { status: 400, message: '"<email>" is not an e-mail address' },
  weak_password: { status: 400, message: "a password needs at least <min> characters" },
  invalid_password: { status: 400, message: "a password has at most <max> characters" },
  invalid_reset_link: { status: 400, message: "this reset link is unknown, used or expired" },
  invalid_limit: { status: 400, message: "<field> must be <rule>" },
  invalid_time_zone: {
    status: 400,
    message: '"<name>" is not an IANA time zone (for example Europe/Monaco or America/Chicago)',
  },
  invalid_zone_set_name: {
    status: 400,
    message: 'split set names such as "<name>" exceed <max> characters; choose a shorter name',
  },
  invalid_max_zones: { status: 400, message: "max zones must be an integer 1..<max>" },
  unknown_geography_type: {
    status: 400,
    message: 'unknown geography_type "<requested>" for country "<country>"<census>; valid: <valid>',
  },
  invalid_bbox: { status: 400, message: "bbox <reason>" },
  invalid_query: { status: 400, message: "<reason>" },
  too_many_results: { status: 400, message: "more than <max> ways match; narrow the geometry" },
  geometry_too_large: { status: 400, message: "geometry.polygon <reason>" },
  invalid_geometry: { status: 400, message: "<reason>" },
  unknown_mode: { status: 400, message: 'unknown mode "<mode>"; valid modes: <valid>' },
  unknown_road_class: { status: 400, message: "unknown road class <classes>; valid classes: <valid>" },
  unknown_segment_ids: { status: 400, message: "unknown segment ids: <ids>" },
  invalid_fields: { status: 400, message: "fields must name at least one column" },
  unknown_field: { status: 400, message: "unknown field <fields>; valid fields: <valid>" },
  duplicate_field: { status: 400, message: "fields repeat <fields>" },
  invalid_day_part: { status: 400, message: 'day_part must be "all" or an index: <valid>' },
  invalid_day_type: { status: 400, message: 'day_type "<value>" is not one of: <valid>' },
  invalid_direction: { status: 400, message: 'direction "<value>" is not one of: <valid>' },
  invalid_source: { status: 400, message: 'source "<value>" is not one of: <valid>' },
  invalid_date: { status: 400, message: "<reason>" },
  invalid_month: { status: 400, message: 'month must be YYYY-MM, not "<month>"' },
  invalid_page: { status: 400, message: "page must be 1 to <pages>" },
  // 401, 403: who is asking
  unauthorized: { status: 401, message: "<reason>" },
  not_a_member: { status: 403, message: "<email> is not a user of this API key's organization" },
  forbidden: { status: 403, message: "<action> needs the <role> role; you are <actual>" },
  account_disabled: { status: 403, message: "this account is disabled" },
  csrf_token_invalid: { status: 403, message: "this request needs the session's <header> header" },
  // 404: nothing of that name (in this organization)
  not_found: { status: 404, message: "no route <method> <path>" },
  file_not_found: { status: 404, message: "no such file: <path>" },
  unknown_country: { status: 404, message: "no network for country <country>" },
  unknown_travel_mode: { status: 404, message: 'unknown travel mode "<mode>"; known modes: <valid>' },
  unknown_organization: { status: 404, message: 'no organization "<organization>"' },
  unknown_user: { status: 404, message: "no user <email> in this organization" },
  unknown_key: { status: 404, message: 'no API key "<key>"' },
  zone_set_not_found: { status: 404, message: 'no zone set "<zone_set>" in this organization' },
  unknown_analysis: { status: 404, message: 'no analysis "<analysis>" in this organization' },
  analysis_deleted: { status: 404, message: 'analysis "<analysis>" was deleted' },
  unknown_metric: {
    status: 404,
    message: 'analysis "<analysis>" has no metric "<metric>"; available: <available>',
  },
  unknown_shapefile: {
    status: 404,
    message: 'analysis "<analysis>" has no shapefile "<shapefile>"; available: <available>',
  },
  zone_set_deleted: { status: 404, message: 'zone set "<zone_set>" of the analysis no longer exists' },
  unknown_request_id: { status: 404, message: 'no <kind> result "<request_id>" (unknown or expired)' },
  // 408, 413, 414, 415, 431: HTTP itself
  request_timeout: { status: 408, message: "the request was not received in time" },
  body_too_large: { status: 413, message: "the body is larger than this route accepts" },
  path_parameter_too_long: { status: 414, message: "a path parameter is longer than 100 characters" },
  unsupported_media_type: { status: 415, message: "the body must be application/json" },
  headers_too_large: {
    status: 431,
    message: "the request line and headers exceed the 16 kB limit",
  },
  // 409: the state of a resource forbids it
  organization_exists: { status: 409, message: 'organization "<name>" already exists' },
  user_exists: { status: 409, message: "<email> is already a user of this organization" },
  own_account: { status: 409, message: "you cannot <action> your own account" },
  key_revoked: { status: 409, message: "API key <key> is revoked" },
  zone_set_name_taken: { status: 409, message: 'a zone set named "<name>" already exists' },
  zone_set_in_use: {
    status: 409,
    message: 'zone set "<zone_set>" is used by the analyses <analyses>; delete them first',
  },
  analysis_name_taken: { status: 409, message: 'an analysis named "<name>" already exists' },
  analysis_finished: {
    status: 409,
    message: 'analysis "<analysis>" is <status>; only a Processing analysis can be cancelled',
  },
  analysis_already_deleted: { status: 409, message: 'analysis "<analysis>" is already deleted' },
  analysis_processing: {
    status: 409,
    message: 'analysis "<analysis>" is still Processing; cancel it first',
  },
  analysis_not_available: { status: 409, message: 'analysis "<analysis>" has no data: <reason>' },
  tag_exists: { status: 409, message: 'the organization already has a tag named "<name>"' },
  // 429: later, or not this month
  rate_limited: { status: 429, message: "more than <max> requests a minute; retry in <seconds> seconds" },
  sign_in_throttled: {
    status: 429,
    message: "too many failed sign-ins: wait <seconds> seconds before trying again",
  },
  sign_in_locked: { status: 429, message: "too many failed sign-ins: locked for <seconds> more seconds" },
  quota_exceeded: {
    status: 429,
    message: "this call needs <units> units; the key has used <used> of its <quota> units this month",
  },
  key_busy: {
    status: 429,
    message: "this key already has <max> heavy requests in progress; retry in <seconds> seconds",
  },
  // 503: the server sheds load rather than queueing it (docs/deployment.md, admission control)
  overloaded: {
    status: 503,
    message: "the server is busy (<reason>); retry in <seconds> seconds",
  },
  time_limit_exceeded: {
    status: 503,
    message:
      "the request needed more than <seconds> seconds of computing and was stopped; narrow it or retry later",
  },
  // 500: a bug; details go to the server log only
  internal_error: { status: 500, message: "the server failed to handle this request" },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The `<name>`s of a template, as a union of names. */
type Placeholders<T extends string> = T extends `${string}<${infer Name}>${infer Rest}`
  ? Name | Placeholders<Rest>
  : never;

/** The values an error of `code` needs: one per placeholder of its template. */
export type ErrorParams<C extends ErrorCode> = Record<
  Placeholders<(typeof ERROR_CATALOGUE)[C]["message"]>,
  string | number
>;

/** The message of `code` with its parameters filled in. */
export function errorMessage<C extends ErrorCode>(code: C, params: ErrorParams<C>): string {
  const values = params as Record<string, string | number>;
  return ERROR_CATALOGUE[code].message.replace(/<([a-z_]+)>/g, (whole, name: string) =>
    name in values ? String(values[name]) : whole,
  );
}

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_CATALOGUE, code);
