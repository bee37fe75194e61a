import { describe, expect, test } from "vitest";
import { drop, isOutcome, MemoryBroker, MemoryTopic, RustStream } from "../../src/index.js";
import { startInProcess } from "./harness.js";

// Batch handlers get their own middleware: consume middleware wraps single messages only, so a
// tracer or a timer that wants batches too says so with consumeBatch.

describe("consumeBatch middleware", () => {
  test("wraps each batch handler call, outermost first, and sees its result; consume wraps none of them", async () => {
    const calls: string[] = [];
    const app = new RustStream({ name: "c", version: "0" })
      .broker(new MemoryBroker(), (b) => {
        b.subscriber(new MemoryTopic("orders", { group: "g" }))
          .batch(10)
          .handle((orders) => {
            calls.push(`handler ${orders.length}`);
            return drop();
          });
      })
      .use({
        consume: () => {
          calls.push("consume");
          throw new Error("consume middleware ran around a batch handler");
        },
        consumeBatch: (messages, ctx, next) => {
          calls.push(`outer ${messages.length} ${ctx.name} ${ctx.group}`);
          const result = next();
          calls.push(`outer saw ${isOutcome(result) ? result.kind : "no outcome"}`);
          return result;
        },
      })
      .use({
        consumeBatch: (_messages, _ctx, next) => {
          calls.push("inner");
          return next();
        },
      });
    const h = await startInProcess(app);
    await h.publish("orders", { id: 1 });
    await h.quiet();
    expect(calls).toEqual(["outer 1 orders g", "inner", "handler 1", "outer saw drop"]);
    expect(h.outcomes("orders").map((o) => o.outcome)).toEqual(["drop"]);
    await h.running.stop();
  });
});
