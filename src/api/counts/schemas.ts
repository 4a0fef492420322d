import { Type } from "typebox";

const Point = Type.Object(
  {
    type: Type.String({ description: "point (any case)" }),
    coordinates: Type.Array(Type.Number(), {
      minItems: 2,
      maxItems: 3,
      description: "[longitude, latitude]",
    }),
  },
  { additionalProperties: false },
);

/** Shapes only; semantics (exactly one selector, ranges, units) are checked in src/domain/counts. */
export const GeometrySelector = Type.Object(
  {
    nearest: Type.Optional(
      Type.Object(
        { point: Point, number_segments: Type.Integer({ description: "1 to 1,000" }) },
        { additionalProperties: false },
      ),
    ),
    radius: Type.Optional(
      Type.Object(
        {
          point: Point,
          geom_mode: Type.Optional(Type.String({ description: "within | intersects (default)" })),
          buffer: Type.Optional(Type.Number()),
          unit: Type.Optional(Type.String({ description: "mile (mi, miles) | km | m (meters) | ft" })),
          distance: Type.Optional(Type.Number({ description: "alternative to buffer" })),
          distance_unit: Type.Optional(Type.String({ description: "alternative to unit" })),
        },
        { additionalProperties: false },
      ),
    ),
    polygon: Type.Optional(
      Type.Object(
        {
          type: Type.String({ description: "Polygon | MultiPolygon" }),
          coordinates: Type.Array(Type.Unknown()),
          geom_mode: Type.Optional(Type.String({ description: "within | intersects (default)" })),
        },
        { additionalProperties: false },
      ),
    ),
    segment_ids: Type.Optional(Type.Array(Type.Integer())),
  },
  { additionalProperties: false, description: "exactly one of nearest, radius, polygon, segment_ids" },
);

export const RoadwayClassification = Type.Object(
  {
    include: Type.Optional(Type.Array(Type.String(), { minItems: 1 })),
    exclude: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: false },
);

const selectionProperties = {
  geometry: GeometrySelector,
  country: Type.String({ minLength: 2, maxLength: 8, description: "lowercase country code" }),
  mode: Type.String({ description: "vehicle | truck | bike | ped" }),
  roadway_classification: Type.Optional(RoadwayClassification),
};

/**
 * Geometry and segment count: other top-level members are ignored, so a client
 * may send the same body it will send to /metrics (the count comes first).
 */
export const SelectionBody = Type.Object(selectionProperties);

export const MetricsBody = Type.Object(
  {
    ...selectionProperties,
    fields: Type.Array(Type.String()),
    day_part: Type.Union([Type.String(), Type.Integer()], { description: "all or a day-part index 0..5" }),
    day_type: Type.String({ description: "all | weekday | weekend | monday … sunday" }),
    direction: Type.String({ description: "bidirectional | with | against" }),
    date: Type.Object(
      { year: Type.Integer(), month: Type.Optional(Type.Integer()) },
      { additionalProperties: false },
    ),
    data_version: Type.Integer(),
    source: Type.Optional(Type.String({ description: "lbs_plus | agps; both when absent" })),
  },
  { additionalProperties: false },
);

export const Paging = Type.Union([
  Type.Null(),
  Type.Object({
    next_url: Type.String(),
    request_id: Type.String(),
    page: Type.Integer({ description: "the page next_url fetches" }),
    page_size: Type.Integer(),
    total_rows: Type.Integer(),
    total_pages: Type.Integer(),
  }),
]);

export const PageQuery = Type.Object({
  page: Type.Optional(
    Type.String({ pattern: "^[1-9][0-9]{0,8}$", description: "page number; 2 when absent" }),
  ),
});

export const RequestIdParams = Type.Object({ request_id: Type.String({ maxLength: 64 }) });

export const GeometryResponse = Type.Object({
  columns: Type.Array(Type.String()),
  data: Type.Array(Type.Array(Type.Unknown())),
  paging: Paging,
  query_rows: Type.Integer(),
  request_id: Type.String(),
  status: Type.Literal("done"),
});

/**
 * Route option of the answers whose `data` is rows of any values (metrics, geometry): the answer as one
 * native JSON.stringify. fast-json-stringify writes such rows with one JSON.stringify call per value,
 * concatenated, which for a metrics page (1,000 rows × 6 fields) was a third of the request's garbage.
 * Same bytes: its calls are JSON.stringify too, and the answers are built with the schema's members only,
 * in its order (test/http/counts.test.ts checks them against the schema's serializer).
 */
export const WHOLE_JSON = { serializerCompiler: () => (data: unknown) => JSON.stringify(data) };

/**
 * An answer `{columns, data, ...rest}` whose `data` is JSON text already (a page written from its
 * columns, src/app/counts/results.ts), byte for byte what JSON.stringify writes for the whole object.
 */
export function answerWithData(columns: readonly string[], dataJson: string, rest: object): string {
  const tail = JSON.stringify(rest);
  return `{"columns":${JSON.stringify(columns)},"data":${dataJson}${tail === "{}" ? "}" : `,${tail.slice(1)}`}`;
}

/**
 * The content type of those answers (what Fastify's JSON serializer sets): Fastify sends a string of a
 * JSON type as it is. (The routes cast the text, `as never`: their typed reply expects the schema's object.)
 */
export const JSON_TEXT = "application/json; charset=utf-8";

export const MetricsResponse = Type.Object({
  columns: Type.Array(Type.String()),
  data: Type.Array(Type.Array(Type.Unknown())),
  data_version: Type.Integer(),
  paging: Paging,
  query_rows: Type.Integer(),
  request_id: Type.String(),
  status: Type.Literal("done"),
});
