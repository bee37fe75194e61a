// running.reportBackgroundFailure(report): a failure of work beside the handlers, outside any
// delivery (an outbox relay's claim), emitted as the app's background-failure event.
import { describe, expect, test } from "vitest";
import {
  type BackgroundFailureEvent,
  MemoryBroker,
  RustStream,
  RustStreamError,
} from "../../src/index.js";
import { startInProcess } from "./harness.js";

async function started() {
  const app = new RustStream({ name: "relay", version: "0.0.0" }).broker(
    new MemoryBroker(),
    (b) => {
      b.subscriber("rows").handle(() => {});
    },
  );
  return startInProcess(app);
}

const failures = (events: readonly { type: string }[]) =>
  events.filter((e): e is BackgroundFailureEvent => e.type === "background-failure");

describe("running.reportBackgroundFailure(report)", () => {
  test("emits one background-failure event with the report's fields, while running and while stopping", async () => {
    const h = await started();
    const claim = new Error("connection terminated");
    const again = new Error("relation does not exist");
    h.running.reportBackgroundFailure({ source: "outbox:events", error: claim });
    h.running.onStopping(() =>
      h.running.reportBackgroundFailure({ source: "outbox:events", error: again }),
    );
    await h.running.stop();
    const seen = failures(h.events);
    expect(seen).toEqual([
      { type: "background-failure", source: "outbox:events", error: claim },
      { type: "background-failure", source: "outbox:events", error: again },
    ]);
    expect(seen[0]?.error).toBe(claim);
  });

  test("refuses a report without its source or error, naming them, and emits nothing", async () => {
    const h = await started();
    const error = new Error("x");
    const bad = [
      { source: "", error },
      { source: 7, error },
      { error },
      { source: "outbox:events" },
      { source: "outbox:events", error: undefined },
      undefined,
      null,
    ];
    for (const report of bad) {
      const reporting = () => h.running.reportBackgroundFailure(report as never);
      expect(reporting).toThrow(RustStreamError);
      expect(reporting).toThrow(/needs \{ source, error \}/);
    }
    expect(failures(h.events)).toEqual([]);
    await h.running.stop();
  });
});
