import { describe, expect, test } from "vitest";
import { bytes, RustStream } from "../../src/index.js";
import { CopyOnlyBroker, takenBackHeader } from "./copyOnlyBroker.js";
import { startInProcess } from "./harness.js";

// A broker may take a delivery back right before its handler runs (Delivery.handOver answers
// false): the runtime then neither runs the handler nor settles the delivery.

describe("a delivery its broker takes back before its handler runs", () => {
  test("is not handled, nor settled by the runtime; the next one is", async () => {
    const handled: string[] = [];
    const app = new RustStream({ name: "h", version: "0" }).broker(new CopyOnlyBroker(), (b) => {
      b.subscriber("in", { codec: bytes }).handle((message) => {
        handled.push(new TextDecoder().decode(message));
      });
    });
    const h = await startInProcess(app);
    await h.publishRaw("in", "taken", { [takenBackHeader]: "yes" });
    await h.publishRaw("in", "fine");
    expect(handled).toEqual(["fine"]);
    // One outcome, the handled one's: the runtime settled nothing else.
    expect(h.outcomes("in").map((e) => e.outcome)).toEqual(["ack"]);
    await h.running.stop();
  });
});
