import { describe, expect, test, vi } from "vitest";
import {
  type Delivery,
  MemoryTopic,
  RustStream,
  readRetryCount,
  retryAfter,
} from "../../src/index.js";
import { CopyOnlyBroker } from "./copyOnlyBroker.js";
import { startInProcess } from "./harness.js";

// A delay the broker cannot keep (nackAfter answers "unsupported") is held in the process. The
// original must stay unsettled until its copy is published: acked at once, a process that died
// within the delay would lose the message, which the broker no longer holds and no copy carries yet.
describe("a delayed retry copy on a broker that cannot delay", () => {
  test("leaves the original unsettled through the delay, then publishes the copy and acks it", async () => {
    const seen: Delivery[] = [];
    const app = new RustStream({ name: "test", version: "0.0.0" }).broker(
      new CopyOnlyBroker(),
      (b) => {
        b.subscriber("orders").handle((_message, ctx) => {
          seen.push(ctx.delivery);
          if (ctx.attempt === 1) return retryAfter(5_000);
          return undefined;
        });
      },
    );
    const h = await startInProcess(app);
    await h.publish("orders", { id: 1 });
    const original = seen[0]!;
    expect(original.settled).toBe(false);
    expect(h.published("orders")).toHaveLength(1);

    await h.advance(4_999);
    expect(original.settled).toBe(false);
    expect(h.published("orders")).toHaveLength(1);

    await h.advance(1);
    const copies = h.published("orders").slice(1);
    expect(copies.map((m) => readRetryCount(m.headers))).toEqual([1]);
    expect(original.settled).toBe(true);
    // The copy came back and was handled on its second attempt, and settled.
    expect(seen).toHaveLength(2);
    expect(seen[1]!.settled).toBe(true);
    await h.running.stop();
  });

  test("a shutdown within the delay publishes the waiting copy and acks the original", async () => {
    const seen: Delivery[] = [];
    const app = new RustStream({ name: "test", version: "0.0.0" }).broker(
      new CopyOnlyBroker(),
      (b) => {
        b.subscriber("orders").handle((_message, ctx) => {
          seen.push(ctx.delivery);
          return retryAfter(60_000);
        });
      },
    );
    const h = await startInProcess(app);
    await h.publish("orders", { id: 1 });
    expect(seen[0]!.settled).toBe(false);
    await h.running.stop();
    expect(
      h
        .published("orders")
        .slice(1)
        .map((m) => readRetryCount(m.headers)),
    ).toEqual([1]);
    expect(seen[0]!.settled).toBe(true);
  });

  test("a process that dies within the delay leaves the original with the broker, which delivers it again", async () => {
    // One broker outlives both apps, as a server outlives a killed process; the group keeps its
    // place across them, as a named consumer does.
    const broker = new CopyOnlyBroker();
    const firstSeen: Delivery[] = [];
    const first = new RustStream({ name: "test", version: "0.0.0" }).broker(broker, (b) => {
      b.subscriber(new MemoryTopic("orders", { group: "billing", start: "start" })).handle(
        (_message, ctx) => {
          firstSeen.push(ctx.delivery);
          return retryAfter(60_000);
        },
      );
    });
    const h = await startInProcess(first);
    await h.publish("orders", { id: 1 });
    expect(firstSeen).toHaveLength(1);
    expect(h.published("orders")).toHaveLength(1);

    // The kill: the connection goes away with the process, the delay never runs out, no stop()
    // publishes the waiting copy. The broker takes back what was handed out and not settled.
    await h.running.connection().shutdown();

    const secondAttempts: number[] = [];
    const second = new RustStream({ name: "test", version: "0.0.0" }).broker(broker, (b) => {
      b.subscriber(new MemoryTopic("orders", { group: "billing", start: "start" })).handle(
        (_message, ctx) => {
          secondAttempts.push(ctx.attempt);
          return undefined;
        },
      );
    });
    const again = await startInProcess(second);
    // The original comes back as it was (first attempt: no retry copy was ever published).
    await vi.waitFor(() => expect(secondAttempts).toEqual([1]));
    await again.running.stop();
    await h.running.stopped;
  });
});
