import { describe, expect, test } from "vitest";
import { bytes, RustStream, readDeadLetterOrigin } from "../../src/index.js";
import { CopyOnlyBroker, unreadableHeader } from "./copyOnlyBroker.js";
import { startInProcess } from "./harness.js";

// A delivery the broker could not read (Delivery.decodeError) is settled by the decode policy: the
// codec and the handler never see it, whatever the codec, so it is never an empty payload.

describe("an unreadable delivery", () => {
  test.each([
    ["json", undefined],
    ["bytes", bytes],
  ] as const)("is dead-lettered by the %s subscriber's decode policy, unhandled", async (_, codec) => {
    const handled: unknown[] = [];
    const app = new RustStream({ name: "u", version: "0" }).broker(new CopyOnlyBroker(), (b) => {
      b.subscriber("in", codec === undefined ? {} : { codec })
        .deadLetter("in-dlq")
        .handle((message) => {
          handled.push(message);
        });
    });
    const h = await startInProcess(app);
    await h.publishRaw("in", "", { [unreadableHeader]: "the entry has no payload field" });
    await h.publishRaw("in", '"fine"');
    const dead = h.published("in-dlq");
    expect(dead).toHaveLength(1);
    expect(readDeadLetterOrigin(dead[0]!.headers)?.reason).toBe("decode");
    expect(handled).toHaveLength(1);
    const failures = h.events.filter((e) => e.type === "decode-failure");
    expect(failures.map((e) => String((e as { error: unknown }).error))).toEqual([
      "RustStreamError: the entry has no payload field",
    ]);
    await h.running.stop();
  });

  test("is dropped without a dead letter, and a batch handler never sees it", async () => {
    const batches: unknown[][] = [];
    const app = new RustStream({ name: "u", version: "0" }).broker(new CopyOnlyBroker(), (b) => {
      b.subscriber("in", { codec: bytes })
        .batch(8)
        .handle((messages) => {
          batches.push([...messages]);
        });
    });
    const h = await startInProcess(app);
    await h.publishRaw("in", "", { [unreadableHeader]: "no payload" });
    const outcomes = h.outcomes("in");
    expect(outcomes.map((o) => [o.outcome, o.handled])).toEqual([["drop", false]]);
    expect(batches).toEqual([]);
    await h.running.stop();
  });
});
