import { Type, type Static } from "typebox";
import { ANALYSIS_TYPES, OUTPUT_TYPES, TRAVEL_MODES } from "../../shared/vocabulary.js";
import { NP_METRIC_TYPES } from "./network-performance.js";
import { SEGMENT_TYPES, VENDOR_FIELDS_NOT_USED, ZONE_INTERSECTION_TYPES } from "./vendor-options.js";

/**
 * The body of `POST /api/v2/analyses`: every field the service reads, with its type. It is the source of the
 * request type (`AnalysisRequest`), of the fields the service knows (the rest become `warnings`, or, one
 * typo away from a known one, a validation issue) and of the body in the OpenAPI document (/docs).
 *
 * The route does not validate with it: `validateAnalysisRequest` checks every field itself and reports
 * every problem at once, in the vendor's words (a schema stops at the first and speaks JSON Schema).
 */
const zoneSetRefs = (description: string) =>
  Type.Optional(
    Type.Array(Type.Object({ name: Type.Optional(Type.String()), uuid: Type.Optional(Type.String()) }), {
      description: `${description}: [{name} | {uuid}]`,
    }),
  );
const flag = (description: string) => Type.Optional(Type.Boolean({ description, default: false }));
const binList = (description: string, example: string) =>
  Type.Optional(
    Type.String({ description: `${description}, comma-separated from-to (last open: 80+)`, example }),
  );
const anyOf = (values: readonly string[], description: string, extra: object = {}) =>
  Type.Optional(Type.String({ enum: [...values], description, ...extra }));

export const AnalysisRequestSchema = Type.Object(
  {
    insight_login_email: Type.String({ maxLength: 254, description: "login of the key's organization" }),
    analysis_name: Type.Optional(
      Type.String({
        maxLength: 50,
        description: "unique in the organization (case-insensitive); default analysis_<uuid prefix>",
      }),
    ),
    analysis_type: anyOf(ANALYSIS_TYPES, "what the analysis computes"),
    travel_mode_type: anyOf(TRAVEL_MODES, "whose trips (matched case-insensitively)"),
    output_type: anyOf(OUTPUT_TYPES, "volume needs calibrated pass-through zones", { default: "index" }),
    oz_sets: zoneSetRefs("origin zone sets"),
    dz_sets: zoneSetRefs(
      "destination zone sets (OD_Analysis, OD_MF_Analysis, Network_OD, Top_Routes_OD; optional for Top_Routes_ZA)",
    ),
    mf_sets: zoneSetRefs("middle filter zone sets (OD_MF_Analysis)"),
    az_sets: zoneSetRefs("AADT reference zone sets (AADT)"),
    geography_type: Type.Optional(
      Type.String({
        description:
          "OD_Preset_Geography, and Zone_Activity_Analysis' home and work locations: admin_N or zip, see GET /preset_geographies/{country}",
      }),
    ),
    aadt_year: Type.Optional(
      Type.Integer({ minimum: 2000, maximum: 2099, description: "AADT: the year averaged" }),
    ),
    metric_type: anyOf(
      NP_METRIC_TYPES,
      "Network_Performance: the figures reported; speed (speeds, free flow) or travel_time (travel time, index, delay), each with traffic and sample size",
      { default: "all" },
    ),
    top_routes_count: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100,
        default: 10,
        description: "Top_Routes_OD, Top_Routes_ZA: routes kept per zone pair (zone), day type and day part",
      }),
    ),
    date_ranges: Type.Optional(
      Type.Array(Type.Object({ start_date: Type.String(), end_date: Type.String() }), {
        description: "MM/DD/YYYY, inclusive, within the supported data periods (GET /date_ranges)",
      }),
    ),
    day_types: Type.Optional(
      Type.String({
        description: "comma-separated <name>|<first><last> weekday, 1 (Monday) to 7",
        example: "Average Day|17,Average Weekday|14,Average Weekend Day|67",
      }),
    ),
    day_parts: Type.Optional(
      Type.String({
        description: "comma-separated <name>|<HH><HH>, end hour inclusive",
        example: "All Day|0023,Peak AM|0609",
      }),
    ),
    traveler_attributes: flag("income, education, ... of the travellers"),
    trip_attributes: flag("speed, duration, length and circuity distributions"),
    country: Type.Optional(
      Type.String({
        description: "country code of the zones' road network; inferred from the zones when omitted",
      }),
    ),
    description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    tags: Type.Optional(
      Type.Union([Type.Array(Type.String()), Type.String()], {
        description: "the organization's tags: an array or a comma-separated string",
      }),
    ),
    unit_of_measurement: anyOf(["miles", "km"], "distances and speeds", { default: "miles" }),
    trip_speed_bins: binList("speed bins", "0-10,10-20,20-30,30+"),
    trip_duration_bins: binList("duration bins in minutes", "0-10,10-20,20+"),
    trip_length_bins: binList("length bins", "0-1,1-2,2-5,5+"),
    trip_circuity_bins: binList("circuity bins", "1-1.2,1.2-1.4,1.4+"),
    enable_speed_percentile: flag("speed percentiles per zone pair"),
    speed_percentile_bins: Type.Optional(
      Type.String({ description: "percentiles", example: "5,15,50,85,95" }),
    ),
    // The vendor's options (docs/analyses.md, Vendor options); "" or null leaves one at its default.
    enable_home_work_locations: flag("home and work locations of the travellers"),
    hwl_enable_visitor: flag("home/work locations: visitors"),
    hwl_enable_resident: flag("home/work locations: residents"),
    hwl_enable_worker: flag("home/work locations: workers"),
    aadt_calibration_year: Type.Optional(
      Type.Union([Type.Integer({ minimum: 2000, maximum: 2099 }), Type.Null()]),
    ),
    segment_types: Type.Optional(Type.Array(Type.String({ enum: [...SEGMENT_TYPES] }))),
    enable_15min: flag("od_<mode>_15min: the mode's flows per quarter hour"),
    is_massive_queue: flag("queue behind the other analyses"),
    zone_intersection_type: anyOf(ZONE_INTERSECTION_TYPES, "which trips a pass-through zone counts"),
    enable_visualization: flag("accepted; the web application always visualises"),
    enable_completion_email: flag("notify the organization's completion webhook"),
    ...Object.fromEntries(
      VENDOR_FIELDS_NOT_USED.map((name) => [
        name,
        Type.Optional(Type.Unknown({ description: "other vendor versions' field: accepted and ignored" })),
      ]),
    ),
  },
  {
    additionalProperties: true,
    description: "Other top-level fields are ignored and named in the answer's warnings",
  },
);

/** A create request as a client writes it (before validation: `validateAnalysisRequest` reads `unknown`). */
export type AnalysisRequest = Static<typeof AnalysisRequestSchema>;

/** Every top-level field the service knows. */
export const ANALYSIS_REQUEST_FIELDS: readonly string[] = Object.keys(AnalysisRequestSchema.properties);
