import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { MessageChannel } from "node:worker_threads";
import { transferableInput, type WorkerInput, type WorkerTask } from "../../src/jobs/analysis-thread.js";

const input = (task: WorkerTask) => ({ spec: {}, computeModule: "", task }) as unknown as WorkerInput;
/** Bytes with an ArrayBuffer of their own, as the queue's reads of shard results are. */
const own = (n: number) => new Uint8Array(new ArrayBuffer(n)).fill(7);

describe("a task's partial sums handed to the analysis thread", () => {
  it("moves the buffers the bytes fill alone, each once, and copies views into larger buffers", () => {
    const shared = new ArrayBuffer(64);
    const a = own(16);
    const b = own(32);
    const view = new Uint8Array(shared, 8, 8);
    const transfer = transferableInput(
      input({
        type: "merge-part",
        partials: [
          [a, null, view],
          [b, a],
        ],
        part: 0,
        parts: 2,
      }),
    );
    assert.deepEqual(transfer, [a.buffer, b.buffer]);
  });

  it("moves the merge's part results too, and nothing of a shard or a whole run", () => {
    const piece = own(8);
    const part = own(8);
    const merge = transferableInput(input({ type: "merge", partials: [[piece]], parts: [part] }));
    assert.deepEqual(merge, [piece.buffer, part.buffer]);
    assert.deepEqual(transferableInput(input({ type: "merge", partials: [[piece]], parts: "stored" })), [
      piece.buffer,
    ]);
    assert.deepEqual(transferableInput(input({ type: "whole" })), []);
  });

  it("arrives whole on the other side, the sender's bytes detached rather than copied", async () => {
    const piece = own(1024);
    const task: WorkerTask = { type: "merge-part", partials: [[piece]], part: 1, parts: 2 };
    const { port1, port2 } = new MessageChannel();
    const received = new Promise<WorkerInput>((resolve) => port2.once("message", resolve));
    port1.postMessage(input(task), transferableInput(input(task)));
    const got = await received;
    port1.close();
    port2.close();
    assert.equal(piece.byteLength, 0);
    const bytes = got.task.type === "merge-part" ? got.task.partials[0][0] : null;
    assert.deepEqual(bytes, new Uint8Array(1024).fill(7));
  });
});
