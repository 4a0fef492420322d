import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { NetworkRegistry } from "../../src/engine/network/registry.js";
import { gridNetwork } from "../helpers/counts.js";

/** The in-memory networks: one load per import, shared by concurrent uses, dropped when the stamp moves. */
describe("NetworkRegistry with an import stamp", () => {
  const counting = (stamp: { value: string | null }, recheckMs: number) => {
    const calls = { loads: 0, stamps: 0 };
    const registry = new NetworkRegistry(
      () => {
        calls.loads++;
        return stamp.value === null ? [] : gridNetwork();
      },
      {
        stampOf: async () => {
          calls.stamps++;
          return stamp.value;
        },
        recheckMs,
      },
    );
    return { registry, calls };
  };

  it("loads a country once for concurrent first uses and keeps it while the stamp stays", async () => {
    const { registry, calls } = counting({ value: "2026-01-01" }, 0);
    const [a, b] = await Promise.all([registry.get("MC"), registry.get("mc")]);
    assert.ok(a && a === b);
    assert.equal(await registry.get("mc"), a);
    assert.equal(calls.loads, 1);
    assert.ok(calls.stamps >= 2, "with recheckMs 0 every later use reads the stamp");
  });

  it("reloads after the stamp moved, and finds a country imported after a use that found none", async () => {
    const stamp: { value: string | null } = { value: null };
    const { registry, calls } = counting(stamp, 0);
    assert.equal(await registry.get("mc"), null);
    stamp.value = "2026-01-01";
    const first = await registry.get("mc");
    assert.ok(first);
    stamp.value = "2026-02-01";
    const second = await registry.get("mc");
    assert.ok(second && second !== first);
    assert.equal(calls.loads, 3);
  });

  it("trusts a loaded network for recheckMs without reading the stamp", async () => {
    const stamp = { value: "2026-01-01" };
    const { registry, calls } = counting(stamp, 60_000);
    const first = await registry.get("mc");
    stamp.value = "2026-02-01";
    assert.equal(await registry.get("mc"), first);
    assert.equal(calls.stamps, 1);
    registry.invalidate("mc");
    assert.notEqual(await registry.get("mc"), first, "invalidate drops it at once");
  });
});
