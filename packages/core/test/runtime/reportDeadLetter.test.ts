// running.reportDeadLetter(report): a dead letter moved by work beside the handlers (an outbox
// relay), emitted as the app's dead-letter event, in the shape a subscriber's has.
import { describe, expect, test } from "vitest";
import {
  bytes,
  type DeadLetterEvent,
  type Delivery,
  MemoryBroker,
  RustStream,
  RustStreamError,
} from "../../src/index.js";
import { startInProcess } from "./harness.js";

const encoder = new TextEncoder();

/** An app whose one handler keeps the delivery it got: a real delivery to report. */
async function appWithDelivery() {
  const kept: Delivery[] = [];
  const app = new RustStream({ name: "relay", version: "0.0.0" }).broker(
    new MemoryBroker(),
    (b) => {
      b.subscriber("rows", { codec: bytes }).handle((_payload, ctx) => {
        kept.push(ctx.delivery);
      });
    },
  );
  const h = await startInProcess(app);
  await h.publishRaw("rows", encoder.encode("row 1"));
  const delivery = kept[0];
  if (delivery === undefined) throw new Error("the handler got no delivery");
  return { h, delivery };
}

describe("running.reportDeadLetter(report)", () => {
  test("emits one dead-letter event with the report's fields, while running and while stopping", async () => {
    const { h, delivery } = await appWithDelivery();
    const report = {
      subscriber: "outbox:events",
      delivery,
      destination: "events.dead",
      reason: "max-attempts",
      movedBy: "broker",
    } as const;
    h.running.reportDeadLetter(report);
    h.running.onStopping(() => h.running.reportDeadLetter({ ...report, reason: "rejected" }));
    await h.running.stop();
    const dead = h.events.filter((e): e is DeadLetterEvent => e.type === "dead-letter");
    expect(dead).toEqual([
      { type: "dead-letter", ...report },
      { type: "dead-letter", ...report, reason: "rejected" },
    ]);
    expect(dead[0]?.delivery.payload).toEqual(encoder.encode("row 1"));
  });

  test("refuses a report without its fields, naming them, and emits nothing", async () => {
    const { h, delivery } = await appWithDelivery();
    const bad = [
      { subscriber: "", delivery, destination: "events.dead", reason: "x", movedBy: "broker" },
      { subscriber: "outbox:events", delivery, destination: "", reason: "x", movedBy: "broker" },
      { subscriber: "outbox:events", delivery, destination: "d", reason: "x", movedBy: "relay" },
      { subscriber: "outbox:events", destination: "d", reason: "x", movedBy: "broker" },
      undefined,
    ];
    for (const report of bad) {
      const reporting = () => h.running.reportDeadLetter(report as never);
      expect(reporting).toThrow(RustStreamError);
      expect(reporting).toThrow(/needs \{ subscriber, delivery, destination, reason, movedBy \}/);
    }
    expect(h.events.filter((e) => e.type === "dead-letter")).toEqual([]);
    await h.running.stop();
  });
});
