import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { ERROR_CATALOGUE, errorMessage } from "../../src/domain/error-catalogue.js";
import { DomainError, fail, ValidationError } from "../../src/domain/errors.js";
import { toDomainError } from "../../src/app/error-mapping.js";
import { EngineError } from "../../src/engine/errors.js";
import { NameTakenError } from "../../src/app/ports/store.js";

const DOC = new URL("../../docs/api-conventions.md", import.meta.url);

/** The rows of the table under "### Error catalogue": code → [status, message template]. */
function documentedCatalogue(): Map<string, [number, string]> {
  const text = readFileSync(DOC, "utf8");
  const section = text.split("### Error catalogue")[1]?.split(/\n#/)[0] ?? "";
  const rows = new Map<string, [number, string]>();
  for (const line of section.split("\n")) {
    const cells = /^\| `([a-z_]+)` \| (\d{3}) \| `(.*)` \|$/.exec(line);
    if (cells) rows.set(cells[1], [Number(cells[2]), cells[3]]);
  }
  return rows;
}

describe("error catalogue", () => {
  it("is documented row for row in docs/api-conventions.md (code, status, message)", () => {
    const documented = documentedCatalogue();
    const catalogued = new Map(
      Object.entries(ERROR_CATALOGUE).map(([code, e]): [string, [number, string]] => [
        code,
        [e.status, e.message],
      ]),
    );
    assert.ok(documented.size > 50, `the doc table was found: ${documented.size} rows`);
    assert.deepEqual(Object.fromEntries(documented), Object.fromEntries(catalogued));
  });

  it("writes templates without braces (clients format messages as templates)", () => {
    const withBraces = Object.entries(ERROR_CATALOGUE).filter(([, e]) => /[{}]/.test(e.message));
    assert.deepEqual(withBraces, []);
  });

  it("raises errors by code with the catalogue's status and the template filled in", () => {
    const err = fail("unknown_country", { country: "fr" }, "country");
    assert.ok(err instanceof DomainError);
    assert.deepEqual(
      [err.httpStatus, err.code, err.message, err.field],
      [404, "unknown_country", "no network for country fr", "country"],
    );
    assert.equal(fail("account_disabled").message, "this account is disabled");
    assert.equal(errorMessage("invalid_page", { pages: 3 }), "page must be 1 to 3");
    const invalid = new ValidationError([{ field: "a", message: "is required" }]);
    assert.deepEqual(
      [invalid.httpStatus, invalid.code, invalid.message],
      [400, "validation_failed", "a: is required"],
    );
  });

  it("maps the engine's and the store adapters' own errors to catalogue errors", () => {
    const osm = toDomainError(new EngineError("unsupported_osm_file", "expected .osm.pbf", "roads.csv"));
    assert.ok(osm instanceof DomainError);
    assert.equal(osm.code, "unsupported_osm_file");
    assert.equal(osm.message, 'unknown OSM file type "roads.csv": expected .osm.pbf, .osm or .osm.gz');
    const taken = toDomainError(new NameTakenError("zone_set", "Centre"));
    assert.ok(taken instanceof DomainError);
    assert.deepEqual(
      [taken.httpStatus, taken.code, taken.field],
      [409, "zone_set_name_taken", "zone_set_name"],
    );
    const other = new Error("bug");
    assert.equal(toDomainError(other), other);
  });
});
