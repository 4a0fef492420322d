import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DomainError } from "../../src/domain/errors.js";
import { checkTimeZone } from "../../src/domain/network-time-zone.js";
import { networkTimeZone } from "../../src/app/networks.js";
import { openContext } from "../../src/main/runtime.js";
import { importNetwork } from "../../src/app/network-import.js";
import { tempDir } from "../helpers/temp-dir.js";

const FIXTURE = new URL("../fixtures/t-junction.osm", import.meta.url).pathname;
const quiet = () => {};

describe("a network's local time zone", () => {
  const rt = openContext(tempDir("streetflow-tz-"));

  it("is stored as given at import, in Intl's spelling", async () => {
    await importNetwork(rt, FIXTURE, "US", quiet, "america/chicago");
    assert.equal(await networkTimeZone(rt.store, "us"), "America/Chicago");
  });

  it("defaults to the country table, and UTC for countries it does not list", async () => {
    await importNetwork(rt, FIXTURE, "mc", quiet);
    await importNetwork(rt, FIXTURE, "zz", quiet);
    assert.equal(await networkTimeZone(rt.store, "MC"), "Europe/Monaco");
    assert.equal(await networkTimeZone(rt.store, "zz"), "UTC");
    // No network imported yet: the table still answers.
    assert.equal(await networkTimeZone(rt.store, "de"), "Europe/Berlin");
  });

  it("rejects a name that is not an IANA zone before reading the file, keeping the old import", async () => {
    await assert.rejects(importNetwork(rt, "/no/such/file.osm", "us", quiet, "Mars/Olympus"), (err) => {
      assert.ok(err instanceof DomainError);
      assert.equal(err.code, "invalid_time_zone");
      return true;
    });
    assert.equal(await networkTimeZone(rt.store, "us"), "America/Chicago");
    assert.equal(checkTimeZone("UTC"), "UTC");
  });
});
