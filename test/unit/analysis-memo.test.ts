import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { AnalysisMemo } from "../../src/app/analyses/memo.js";

/** What a warm analysis thread keeps between an analysis' tasks: built once, bounded, rebuilt when stale. */
describe("analysis memo", () => {
  const counting = () => {
    let builds = 0;
    return { make: async () => ++builds, builds: () => builds };
  };

  it("builds a value once per analysis and source, and again from a new source", async () => {
    const memo = new AnalysisMemo();
    const { make, builds } = counting();
    const network = {};
    assert.equal(await memo.get("a", "zones", network, make), 1);
    assert.equal(await memo.get("a", "zones", network, make), 1);
    assert.equal(builds(), 1);
    // A re-imported network is a new object: the zones compiled on the old one are not reused.
    assert.equal(await memo.get("a", "zones", {}, make), 2);
    assert.equal(await memo.get("b", "zones", network, make), 3);
  });

  it("keeps the most recently used analyses only, and forgets a finished one", async () => {
    const memo = new AnalysisMemo(2);
    const { make, builds } = counting();
    const network = {};
    await memo.get("a", "zones", network, make);
    await memo.get("b", "zones", network, make);
    await memo.get("a", "zones", network, make); // a is now the most recent
    await memo.get("c", "zones", network, make); // b goes
    assert.equal(memo.size, 2);
    assert.equal(builds(), 3);
    await memo.get("a", "zones", network, make);
    assert.equal(builds(), 3, "a was kept");
    await memo.get("b", "zones", network, make);
    assert.equal(builds(), 4, "b was built again");
    memo.forget("b");
    assert.equal(memo.size, 1);
  });

  it("does not keep a failed build", async () => {
    const memo = new AnalysisMemo();
    const network = {};
    await assert.rejects(
      memo.get("a", "zones", network, () => Promise.reject(new Error("gone"))),
      /gone/,
    );
    assert.equal(await memo.get("a", "zones", network, () => Promise.resolve(7)), 7);
  });
});
