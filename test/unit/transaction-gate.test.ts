import assert from "node:assert/strict";
import { describe, it } from "node:test";
import Database from "better-sqlite3";
import { TransactionGate } from "../../src/store/sqlite/async-port.js";

function gated() {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE t (v INTEGER)");
  const gate = new TransactionGate(db);
  const insert = (v: number) => gate.call(() => db.prepare("INSERT INTO t VALUES (?)").run(v));
  const values = () => (db.prepare("SELECT v FROM t ORDER BY rowid").raw().all() as number[][]).flat();
  return { gate, insert, values };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe("SQLite transaction gate", () => {
  it("makes a caller outside an open transaction wait for its end, so a rollback takes none of its writes", async () => {
    const { gate, insert, values } = gated();
    for (let round = 0; round < 2; round++) {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const inside = gate.transaction(async () => {
        await insert(1);
        await held;
        await insert(3);
        throw new Error("rolled back");
      });
      await turns(2);
      let outsideDone = false;
      const outside = insert(2).then(() => (outsideDone = true));
      await turns(3);
      assert.equal(outsideDone, false, "the outside call ran inside the transaction");
      release();
      await assert.rejects(inside, /rolled back/);
      await outside;
    }
    // Each round kept only the outside caller's row: the transactions' own rows went with their rollback.
    assert.deepEqual(values(), [2, 2]);
  });

  it("lets calls and nested transactions from inside pass, in every transaction, not only the first", async () => {
    const { gate, insert, values } = gated();
    for (let v = 0; v < 3; v++)
      await gate.transaction(async () => {
        await insert(v);
        await gate.transaction(async () => await insert(10 + v));
      });
    assert.deepEqual(values(), [0, 10, 1, 11, 2, 12]);
  });
});
