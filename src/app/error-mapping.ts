import { EngineError } from "../engine/errors.js";
import { NameTakenError } from "./ports/store.js";
import { fail } from "../domain/errors.js";

/**
 * The catalogue error for a refusal of the engine or of a store adapter (which speak their own terms,
 * knowing nothing of HTTP); any other error unchanged.
 */
export function toDomainError(err: unknown): unknown {
  if (err instanceof NameTakenError) return nameTaken(err);
  if (!(err instanceof EngineError)) return err;
  const file = err.file ?? "";
  switch (err.code) {
    case "unsupported_osm_file":
      return fail("unsupported_osm_file", { file });
    case "invalid_osm_file":
      return fail("invalid_osm_file", { file, reason: err.reason });
    case "invalid_trace_file":
      return fail("invalid_trace_file", { file, reason: err.reason });
    case "invalid_option":
      return fail("invalid_option", { reason: err.reason });
  }
}

function nameTaken(err: NameTakenError): unknown {
  const name = err.takenName;
  switch (err.kind) {
    case "organization":
      return fail("organization_exists", { name });
    case "zone_set":
      return fail("zone_set_name_taken", { name }, "zone_set_name");
    case "analysis":
      return fail("analysis_name_taken", { name }, "analysis_name");
  }
}

/**
 * Runs `work` (synchronous or not), raising what the engine or a store adapter refuses as catalogue
 * errors: `const set = mapErrors(() => store.zoneSets.create(stored))`.
 */
export function mapErrors<T>(work: () => T): T {
  let result: T;
  try {
    result = work();
  } catch (err) {
    throw toDomainError(err);
  }
  if (result instanceof Promise)
    return result.catch((err: unknown) => {
      throw toDomainError(err);
    }) as T;
  return result;
}
