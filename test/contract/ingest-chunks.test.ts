import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import CheapRuler from "cheap-ruler";
import type { AppContext } from "../../src/app/context.js";
import { encodeChunk, storeIngestChunk, type IngestChunkPayload } from "../../src/app/ingest-chunk.js";
import type { BatchMatcher } from "../../src/engine/ingest/match-pool.js";
import { tripMatcher } from "../../src/engine/matching/index.js";
import type { RawTrip } from "../../src/engine/trips/types.js";
import { storeNetworks } from "../../src/app/networks.js";
import { gridNetwork } from "../helpers/grid-network.js";
import { storeDigest } from "../helpers/store-digest.js";
import { backends } from "./backends.js";

/**
 * The chunk use case of a distributed ingest on both stores: a chunk's trips, tallies and done marker
 * commit together, so a run that died before its commit leaves nothing, and a chunk run again (or twice
 * at once) stores its trips once.
 */
const stores = await backends();
after(async () => {
  await Promise.all(stores.map((b) => b.dispose()));
});

const network = gridNetwork({ size: 8 });
const match: BatchMatcher = async (trips) => trips.map((trip) => ({ matched: tripMatcher(network)(trip) }));

/** Trips along the grid's rows, one device each, a minute per block. */
function rowTrips(count: number): RawTrip[] {
  const ruler = new CheapRuler(43.725, "meters");
  const start = Date.UTC(2025, 2, 3, 8);
  return Array.from({ length: count }, (_, i) => ({
    deviceId: `d${i}`,
    vehicleClass: "personal",
    source: "lbs",
    points: Array.from({ length: 12 }, (_, k) => {
      const [lon, lat] = ruler.offset([7.41, 43.725], k * 50, (i % 8) * 150);
      return { lon, lat, t: start + i * 3_600_000 + k * 10_000 };
    }),
  }));
}

async function contextOf(open: () => Promise<AppContext["store"]>): Promise<AppContext> {
  const store = await open();
  await store.network.replaceCountry(
    {
      country: "mc",
      source: "grid",
      segmentCount: network.segments.length,
      importedAt: new Date().toISOString(),
    },
    network.segments,
  );
  return { store, networks: storeNetworks(store.network) };
}

const chunk = (seq: number): IngestChunkPayload => ({ ingestId: "ingest-1", seq, country: "mc" });

for (const backend of stores) {
  describe(`ingest chunks on ${backend.name}`, { skip: backend.skip }, () => {
    it("a chunk stores its trips and tallies with its done marker; run again, it stores nothing", async () => {
      const ctx = await contextOf(() => backend.open());
      await ctx.store.ingestChunks.add("ingest-1", 0, encodeChunk(rowTrips(6)));
      const first = await storeIngestChunk(ctx, chunk(0), match);
      assert.equal(first.type, "stored");
      const stored = first.type === "stored" ? first.result.stored : 0;
      assert.ok(stored >= 6, `matched and stored (${stored})`);
      const digest = await storeDigest(ctx.store, "mc");
      assert.equal(digest.trips, stored);

      assert.deepEqual(await storeIngestChunk(ctx, chunk(0), match), { type: "done already" });
      assert.deepEqual(await storeDigest(ctx.store, "mc"), digest);
      const [state] = await ctx.store.ingestChunks.list("ingest-1");
      assert.equal(state.state, "done");
      assert.equal(state.result?.stored, stored);
      assert.equal(await ctx.store.ingestChunks.input("ingest-1", 0), null, "the input is dropped once done");
    });

    it("a chunk counts its match outcomes as the ingest pipeline does and keeps the error messages", async () => {
      const ctx = await contextOf(() => backend.open());
      await ctx.store.ingestChunks.add("ingest-1", 0, encodeChunk(rowTrips(4)));
      const failing: BatchMatcher = async (trips) =>
        trips.map((trip) => {
          if (trip.deviceId === "d1") return { error: "no road" };
          if (trip.deviceId === "d2") return { matched: [] };
          return { matched: tripMatcher(network)(trip) };
        });
      const outcome = await storeIngestChunk(ctx, chunk(0), failing);
      assert.equal(outcome.type, "stored");
      const result = outcome.type === "stored" ? outcome.result : null;
      assert.equal(result?.matchErrors, 1);
      assert.equal(result?.unmatchedTrips, 1);
      assert.equal(result?.stored, result?.matchedTrips);
      assert.ok((result?.matchedTrips ?? 0) >= 2);
      assert.equal(result?.problems.length, 1);
      assert.match(
        result!.problems[0],
        /^matching the trip of d1 at 2025-03-03T09:00:00.000Z failed: no road$/,
      );
      assert.equal(result?.moreProblems, 0);
    });

    it("a chunk of several files counts each file's part; parts that are not its trips are refused", async () => {
      const ctx = await contextOf(() => backend.open());
      const trips = rowTrips(6);
      await ctx.store.ingestChunks.add("ingest-1", 0, encodeChunk(trips.slice(0, 2)));
      await storeIngestChunk(ctx, chunk(0), match);
      await ctx.store.ingestChunks.add("ingest-1", 1, encodeChunk(trips));
      const d2Unmatched: BatchMatcher = async (group) =>
        group.map((trip) => ({ matched: trip.deviceId === "d2" ? [] : tripMatcher(network)(trip) }));
      const outcome = await storeIngestChunk(ctx, { ...chunk(1), parts: [2, 1, 3] }, d2Unmatched);
      assert.equal(outcome.type, "stored");
      const result = outcome.type === "stored" ? outcome.result : null;
      const [before, unmatched, fresh] = result!.parts!;
      assert.ok(before.matchedTrips >= 2);
      assert.deepEqual([before.stored, before.duplicates], [0, before.matchedTrips], "stored by chunk 0");
      assert.deepEqual([unmatched.unmatchedTrips, unmatched.matchedTrips, unmatched.stored], [1, 0, 0]);
      assert.ok(fresh.matchedTrips >= 3);
      assert.deepEqual([fresh.stored, fresh.duplicates], [fresh.matchedTrips, 0]);
      for (const key of ["matchedTrips", "unmatchedTrips", "stored", "duplicates"] as const)
        assert.equal(before[key] + unmatched[key] + fresh[key], result![key], key);

      await ctx.store.ingestChunks.add("ingest-1", 2, encodeChunk(trips));
      await assert.rejects(
        storeIngestChunk(ctx, { ...chunk(2), parts: [1, 1] }, match),
        /chunk 3: its parts \(1, 1\) are not its 6 trips/,
      );
    });

    it("a run that dies before its commit leaves nothing; the retry stores the chunk once", async () => {
      const ctx = await contextOf(() => backend.open());
      await ctx.store.ingestChunks.add("ingest-1", 0, encodeChunk(rowTrips(5)));
      // The chunk's transaction joins this one, which then fails as a killed worker's would.
      await assert.rejects(
        ctx.store.transaction(async () => {
          await storeIngestChunk(ctx, chunk(0), match);
          throw new Error("killed");
        }),
        /killed/,
      );
      assert.equal((await storeDigest(ctx.store, "mc")).trips, 0);
      assert.equal((await ctx.store.ingestChunks.list("ingest-1"))[0].state, "queued");
      assert.equal((await storeIngestChunk(ctx, chunk(0), match)).type, "stored");
      const retried = await storeDigest(ctx.store, "mc");

      // The same chunk stored at the first go, in a fresh store.
      const clean = await contextOf(() => backend.open());
      await clean.store.ingestChunks.add("ingest-1", 0, encodeChunk(rowTrips(5)));
      await storeIngestChunk(clean, chunk(0), match);
      assert.deepEqual(retried, await storeDigest(clean.store, "mc"));
    });

    it("two runs of one chunk at once: one stores it, the other finds it done", async () => {
      const ctx = await contextOf(() => backend.open());
      await ctx.store.ingestChunks.add("ingest-1", 0, encodeChunk(rowTrips(4)));
      const outcomes = await Promise.all([
        storeIngestChunk(ctx, chunk(0), match),
        storeIngestChunk(ctx, chunk(0), match),
      ]);
      assert.deepEqual(outcomes.map((o) => o.type).sort(), ["done already", "stored"]);
      const stored = outcomes.find((o) => o.type === "stored");
      assert.equal(
        (await storeDigest(ctx.store, "mc")).trips,
        stored?.type === "stored" ? stored.result.stored : -1,
      );
    });

    it("a chunk given up while matching (its lease lost) sends no further group and writes nothing", async () => {
      const ctx = await contextOf(() => backend.open());
      await ctx.store.ingestChunks.add("ingest-1", 0, encodeChunk(rowTrips(200)));
      let groupsSent = 0;
      const counting: BatchMatcher = async (trips) => {
        groupsSent++;
        return await match(trips);
      };
      // Held for the first group only: the chunk's four groups (64, 64, 64 and 8 trips) stop after it.
      const keepGoing = () => groupsSent === 0;
      assert.deepEqual(await storeIngestChunk(ctx, chunk(0), counting, keepGoing), { type: "abandoned" });
      assert.equal(groupsSent, 1);
      assert.equal((await storeDigest(ctx.store, "mc")).trips, 0);
      assert.equal((await ctx.store.ingestChunks.list("ingest-1"))[0].state, "queued");
    });

    it("a chunk given up before storing (worker stopping) writes nothing and stays to do", async () => {
      const ctx = await contextOf(() => backend.open());
      await ctx.store.ingestChunks.add("ingest-1", 0, encodeChunk(rowTrips(3)));
      assert.deepEqual(await storeIngestChunk(ctx, chunk(0), match, () => false), { type: "abandoned" });
      assert.equal((await storeDigest(ctx.store, "mc")).trips, 0);
      assert.equal((await ctx.store.ingestChunks.list("ingest-1"))[0].state, "queued");
      await ctx.store.ingestChunks.markFailed("ingest-1", 0, "interrupted 3 times");
      assert.deepEqual(
        (await ctx.store.ingestChunks.list("ingest-1")).map((c) => [c.state, c.failure]),
        [["failed", "interrupted 3 times"]],
      );
      await ctx.store.ingestChunks.drop("ingest-1");
      assert.deepEqual(await ctx.store.ingestChunks.list("ingest-1"), []);
    });
  });
}
