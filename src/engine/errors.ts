/**
 * Why an engine algorithm refused its input. The engine knows nothing of HTTP or of the API's error
 * catalogue: the application maps these codes to catalogue codes (`src/domain/engine-errors.ts`).
 */
export type EngineErrorCode =
  /** An OSM file of a type the readers do not know (by its name). */
  | "unsupported_osm_file"
  /** An OSM file the parser could not read (truncated PBF, malformed XML). */
  | "invalid_osm_file"
  /** A trace file whose content is not a trace (e.g. GeoJSON that is no FeatureCollection). */
  | "invalid_trace_file"
  /** Options an algorithm cannot run with (a simulation with no trips per day). */
  | "invalid_option";

export class EngineError extends Error {
  constructor(
    readonly code: EngineErrorCode,
    /** What is wrong, for people: no file name in it. */
    readonly reason: string,
    /** The file at fault, when there is one. */
    readonly file?: string,
  ) {
    super(file === undefined ? reason : `${file}: ${reason}`);
    this.name = "EngineError";
  }
}
