import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import {
  computeAnalysis,
  computeMergePart,
  computeShard,
  mergeShards,
  type ComputeContext,
} from "../../src/app/analyses/compute.js";
import {
  cutShards,
  mergePartPieces,
  mergePartsOf,
  PARTS_STORED,
  piecesOfMergePart,
  planShards,
} from "../../src/app/analyses/shards.js";
import { odShardPartial } from "../../src/app/analyses/od-metrics.js";
import { AnalysisMemo } from "../../src/app/analyses/memo.js";
import { shardScenario } from "../helpers/shard-scenario.js";

/**
 * An analysis split into shards (month × chunk id range), each computed on its own and merged, gives the
 * very CSV bytes of one pass over all its trips: sums are exact, whatever the split and merge order.
 */
describe("analysis shards", () => {
  const store = new SqliteStore(":memory:");
  let scenario: Awaited<ReturnType<typeof shardScenario>>;
  let ctx: ComputeContext;

  before(async () => {
    scenario = await shardScenario(store);
    ctx = { store, networks: scenario.networks, onProgress: () => {} };
  });
  after(async () => await store.close());

  const sharded = async (
    name: string,
    extra: Record<string, unknown>,
    shardTrips: number,
    reverse = false,
  ) => {
    const spec = await scenario.spec(name, extra);
    const shards = await planShards(spec, store, shardTrips);
    assert.ok(shards && shards.length > 1, "the analysis splits into shards");
    // As in a warm worker thread: the shards and the merge share the analysis' compiled zones.
    const warm = { ...ctx, memo: new AnalysisMemo() };
    const partials = [];
    for (const shard of shards) partials.push(await computeShard(spec, shard, warm));
    if (reverse) partials.reverse();
    return { spec, shards, partials, metrics: await mergeShards(spec, partials, warm) };
  };

  for (const [label, extra] of [
    ["index", {}],
    ["trip counts with 15-minute rows", { output_type: "trip_counts", enable_15min: true }],
    ["zone counts", { output_type: "zone_counts" }],
    ["commercial vehicles", { travel_mode_type: "Truck" }],
  ] as const)
    it(`${label}: the merged CSVs equal the whole run's, byte for byte`, async () => {
      const { spec, shards, metrics } = await sharded(`Shards ${label}`, extra, 1, true);
      // Every chunk its own shard: 900 trips a month in batches of 200 → 5 chunks in each of 3 months.
      assert.equal(shards.length, 15);
      const whole = await computeAnalysis(spec, ctx);
      assert.deepEqual(Object.keys(metrics).sort(), Object.keys(whole).sort());
      for (const name of Object.keys(whole)) assert.equal(metrics[name], whole[name], `${name} differs`);
      const od = Object.keys(whole).find((m) => /^od_(all|comm)$/.test(m))!;
      assert.ok(whole[od].split("\n").length > 50, "the analysis has rows to compare");
    });

  // Parts split the zone pairs, whatever od_* metrics there are (Truck: od_comm alone, by weight).
  for (const [label, extra] of [
    ["all vehicles", {}],
    ["commercial by weight", { travel_mode_type: "Truck", output_type: "zone_counts" }],
  ] as const)
    it(`${label}: a merge split into parts (runs of zone pairs) gives the whole run's CSVs`, async () => {
      const { spec, partials } = await sharded(`Parts ${label}`, extra, 1);
      const whole = await computeAnalysis(spec, ctx);
      // Each step handed only the pieces it reads: what it does not need is not there.
      const only = (pieces: number[]) =>
        partials.map((p) => p.map((b, i) => (pieces.includes(i) ? b : null)));
      for (const count of [2, 3, 5]) {
        const parts = mergePartsOf(count);
        const results = [];
        // Each part in a thread of its own (no memo shared with the merge).
        for (let part = 0; part < parts; part++)
          results.push(await computeMergePart(spec, only(piecesOfMergePart(part, parts)), part, parts, ctx));
        const metrics = await mergeShards(spec, only([0]), ctx, results);
        assert.deepEqual(Object.keys(metrics), Object.keys(whole), `${parts} parts: the metrics, in order`);
        for (const name of Object.keys(whole))
          assert.equal(metrics[name], whole[name], `${parts} parts: ${name} differs`);
        // The parts' rows stored as result pieces instead: the merge writes the rest, and each metric
        // read back (its result, then its pieces by number) is the whole run's.
        const pieces = results.flatMap((r, part) => mergePartPieces(r, part, parts));
        const merged = await mergeShards(spec, only([0]), ctx, PARTS_STORED);
        assert.deepEqual(
          Object.keys(merged),
          Object.keys(whole),
          `${parts} stored parts: the metrics, in order`,
        );
        for (const name of Object.keys(whole)) {
          const mine = pieces.filter((p) => p.metric === name).sort((a, b) => a.piece - b.piece);
          const text = (csv: string | Uint8Array) =>
            typeof csv === "string" ? csv : Buffer.from(csv).toString("utf8");
          const read = [merged[name], ...mine.map((p) => text(p.csv))].join("");
          assert.equal(read, whole[name], `${parts} stored parts: ${name} differs`);
        }
        assert.ok(pieces.length > parts, "the rows are in pieces");
      }
    });

  it("merges raw sums to the very bits of one pass (expansion weights like 10000/37 included)", async () => {
    const spec = await scenario.spec("Raw sums");
    const shards = (await planShards(spec, store, 1))!;
    const month = (m: string) => ({ year: Number(m.slice(0, 4)), month: Number(m.slice(5)) });
    const parts = [];
    for (const s of shards)
      parts.push(
        await odShardPartial(spec, ctx, {
          fromMonth: month(s.month),
          toMonth: month(s.month),
          chunkIds: { from: s.fromId, to: s.toId },
        }),
      );
    const whole = await odShardPartial(spec, ctx, {});
    const sums = new Map<number, number>();
    for (const p of parts.reverse()) {
      const { keys, values } = p.aggregator.originTotals;
      keys.forEach((k, i) => sums.set(k, (sums.get(k) ?? 0) + values[i]));
    }
    const { keys, values } = whole.aggregator.originTotals;
    assert.equal(sums.size, keys.length);
    keys.forEach((k, i) => assert.equal(sums.get(k), values[i], `origin total ${k}`));
    assert.ok(
      values.some((v) => !Number.isInteger(v)),
      "weights are fractions",
    );
  });

  it("cuts each month's chunks into about equal runs of about the shard size", () => {
    const chunk = (month: string, id: number, tripCount: number) => ({ month, id, tripCount });
    const shards = cutShards(
      [
        ...[1, 4, 9].map((id) => chunk("2025-01", id, 40)),
        ...[2, 3, 5, 6, 7, 8, 10, 12, 13, 14].map((id) => chunk("2025-02", id, 25)),
        chunk("2025-03", 11, 20),
      ],
      100,
    );
    assert.deepEqual(shards, [
      { month: "2025-01", fromId: 1, toId: 9, trips: 120 },
      // 250 trips: 3 runs cut near 83 and 167 (runs of at least 100 would leave a short last one of 50).
      { month: "2025-02", fromId: 2, toId: 5, trips: 75 },
      { month: "2025-02", fromId: 6, toId: 10, trips: 100 },
      { month: "2025-02", fromId: 12, toId: 14, trips: 75 },
      // Less than half a shard's worth: a run of its own all the same.
      { month: "2025-03", fromId: 11, toId: 11, trips: 20 },
    ]);
  });

  it("runs whole the specs whose sums are not split yet; splits at least by month", async () => {
    const attributes = await scenario.spec("Attributes", { trip_attributes: true });
    assert.equal(await planShards(attributes, store, 1), null);
    assert.equal(await planShards(await scenario.spec("AADT", { output_type: "aadt" }), store, 1), null);
    const monthly = await planShards(await scenario.spec("Big shards"), store, 1_000_000);
    assert.deepEqual(
      monthly?.map((s) => [s.month, s.trips]),
      [
        ["2025-02", 900],
        ["2025-03", 900],
        ["2025-04", 900],
      ],
    );
  });
});
