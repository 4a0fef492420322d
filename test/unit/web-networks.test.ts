import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { NetworkInfo } from "../../src/web/client/api.js";
import { boxesMeet, initialNetwork, zoneSetOnNetwork } from "../../src/web/client/networks.js";

const network = (country: string, last_trip_month: string | null, bbox = [0, 0, 1, 1]): NetworkInfo => ({
  country,
  segment_count: 1,
  imported_at: "2026-01-01T00:00:00Z",
  time_zone: "UTC",
  bbox: bbox as NetworkInfo["bbox"],
  last_trip_month,
});

describe("the network the page opens on", () => {
  it("is the one with the most recent trips, not the alphabetically first", () => {
    const networks = [network("ad", null), network("mc", "2026-10"), network("sm", "2026-03")];
    assert.equal(initialNetwork(networks)?.country, "mc");
  });

  it("is the first when none has trips, and none when nothing is imported", () => {
    assert.equal(initialNetwork([network("ad", null), network("mc", null)])?.country, "ad");
    assert.equal(initialNetwork([]), undefined);
  });
});

describe("zone sets listed under a network", () => {
  const monaco = network("mc", "2026-10", [7.4, 43.72, 7.44, 43.76]);
  it("are those whose zones' box meets the network's", () => {
    assert.ok(zoneSetOnNetwork({ bbox: [7.42, 43.73, 7.43, 43.74] }, monaco));
    assert.ok(!zoneSetOnNetwork({ bbox: [1.4, 42.4, 1.8, 42.7] }, monaco), "an Andorra set");
    assert.ok(zoneSetOnNetwork({ bbox: null }, monaco), "a set without positions is not lost");
    assert.ok(zoneSetOnNetwork({ bbox: [1.4, 42.4, 1.8, 42.7] }, undefined));
  });

  it("meet when boxes overlap or touch", () => {
    assert.ok(boxesMeet([0, 0, 1, 1], [1, 1, 2, 2]));
    assert.ok(!boxesMeet([0, 0, 1, 1], [1.1, 0, 2, 1]));
    assert.ok(!boxesMeet([0, 0, 1, 1], [0, 1.1, 1, 2]));
  });
});
