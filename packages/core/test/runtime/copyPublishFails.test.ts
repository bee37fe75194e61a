import { describe, expect, test } from "vitest";
import { type Delivery, RustStream, readRetryCount, retryAfter } from "../../src/index.js";
import { CopyOnlyBroker, type PublishFault } from "./copyOnlyBroker.js";
import { startInProcess } from "./harness.js";

// A retry copy or dead letter the runtime publishes for a broker that cannot requeue or delay (a
// stream file, Kafka) may fail to publish: a broker down, a full disk. The original stays
// unsettled, so nothing is lost to a crash; but it must not stay unsettled until the process
// restarts either, which is when the broker would deliver it again: the runtime tries again after
// the backoff (10 s by default), so a failure that passes costs a delay.
describe("a copy whose publish fails on a broker that cannot delay", () => {
  test("a retry copy is published again after the backoff, then the original is acked", async () => {
    const fault: PublishFault = { refusing: false };
    const seen: Delivery[] = [];
    const app = new RustStream({ name: "test", version: "0.0.0" }).broker(
      new CopyOnlyBroker(fault),
      (b) => {
        b.subscriber("orders").handle((_message, ctx) => {
          seen.push(ctx.delivery);
          return ctx.attempt === 1 ? retryAfter(1_000) : undefined;
        });
      },
    );
    const h = await startInProcess(app);
    fault.refusing = true;
    await h.publish("orders", { id: 1 });
    await h.advance(1_000);
    const original = seen[0]!;
    expect(original.settled).toBe(false);
    expect(h.published("orders")).toHaveLength(1);

    fault.refusing = false;
    await h.advance(10_000);
    const copies = h.published("orders").slice(1);
    expect(copies.map((m) => readRetryCount(m.headers))).toEqual([1]);
    expect(original.settled).toBe(true);
    expect(seen).toHaveLength(2);
    await h.running.stop();
  });

  test("a dead letter is published again after the backoff, however many times it fails", async () => {
    const fault: PublishFault = { refusing: false };
    const seen: Delivery[] = [];
    const app = new RustStream({ name: "test", version: "0.0.0" }).broker(
      new CopyOnlyBroker(fault),
      (b) => {
        b.subscriber("orders")
          .maxAttempts(1)
          .deadLetter("orders.dlq")
          .handle((_message, ctx) => {
            seen.push(ctx.delivery);
            throw new Error("always fails");
          });
      },
    );
    const h = await startInProcess(app);
    fault.refusing = true;
    await h.publish("orders", { id: 1 });
    await h.advance(10_000);
    await h.advance(10_000);
    const original = seen[0]!;
    expect(original.settled).toBe(false);
    expect(h.published("orders.dlq")).toHaveLength(0);

    fault.refusing = false;
    await h.advance(10_000);
    expect(h.published("orders.dlq")).toHaveLength(1);
    expect(original.settled).toBe(true);
    // Held, not delivered again: the handler ran once.
    expect(seen).toHaveLength(1);
    await h.running.stop();
  });

  test("a shutdown while the broker still refuses stops, leaving the original with the broker", async () => {
    const fault: PublishFault = { refusing: true };
    const seen: Delivery[] = [];
    const app = new RustStream({ name: "test", version: "0.0.0" }).broker(
      new CopyOnlyBroker(fault),
      (b) => {
        b.subscriber("orders").handle((_message, ctx) => {
          seen.push(ctx.delivery);
          return retryAfter(60_000);
        });
      },
    );
    const h = await startInProcess(app);
    await h.publish("orders", { id: 1 });
    await h.running.stop();
    expect(seen[0]!.settled).toBe(false);
    expect(h.published("orders")).toHaveLength(1);
  });
});
