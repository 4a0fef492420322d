import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { readAdminAreas } from "../../src/engine/network/admin-areas.js";
import { sharedDataFile } from "../helpers/shared-data.js";
import { MONACO_PBF } from "../helpers/bundled-data.js";

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const FIXTURE = here("../fixtures/boundaries.osm");
const BAYREUTH = sharedDataFile("osm-extracts/north-bayreuth.osm.gz");

const labels = (areas: Awaited<ReturnType<typeof readAdminAreas>>) =>
  areas.map((a) => `${a.kind}:${a.adminLevel ?? a.postalCode}:${a.name}`);

describe("readAdminAreas", () => {
  it("assembles whole administrative and postal-code boundaries, leaving out cut, incomplete and other ones", async () => {
    const areas = await readAdminAreas(FIXTURE);
    assert.deepEqual(labels(areas), [
      "administrative:8:Square Town",
      "administrative:10:North Quarter",
      "postal_code:98000:null",
    ]);
    const town = areas[0];
    assert.equal(town.geometry.type, "Polygon");
    const [outer] = town.geometry.coordinates as number[][][];
    assert.equal(outer.length, 5, "the two ways joined into one closed ring of four corners");
    assert.deepEqual(outer[0], outer[4]);
  });

  it("gives Monaco's 9 quarters (level 10) and the 4 communes wholly inside the extract (level 8)", async () => {
    const areas = await readAdminAreas(MONACO_PBF);
    const names = (level: number) =>
      areas
        .filter((a) => a.adminLevel === level)
        .map((a) => a.name)
        .sort();
    assert.equal(names(10).length, 9);
    assert.ok(names(10).includes("Monte-Carlo"));
    assert.deepEqual(names(8), ["Beausoleil", "Cap-d'Ail", "La Turbie", "Monaco"]);
    assert.deepEqual(names(2), [], "France and Monaco run past the extract's edge");
  });

  it("reads gzip-compressed XML, with its postal-code areas", { skip: !BAYREUTH }, async () => {
    const areas = await readAdminAreas(BAYREUTH!);
    assert.ok(areas.some((a) => a.kind === "postal_code"));
    assert.ok(areas.some((a) => a.kind === "administrative" && a.adminLevel === 8));
  });
});
