// running.reportBackgroundFailure(report): a failure of work beside the handlers, outside any
// delivery (an outbox relay's claim), emitted as the app's background-failure event; and
// running.reportBackgroundRecovered(report): its end, the background-recovered event.
import { describe, expect, test } from "vitest";
import { CountingCoordinator } from "../../src/brokerEntry.js";
import {
  type BackgroundFailureEvent,
  type BackgroundRecoveredEvent,
  type ConnectOptions,
  ManualClock,
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

const background = (events: readonly { type: string }[]) =>
  events.filter(
    (e): e is BackgroundFailureEvent | BackgroundRecoveredEvent =>
      e.type === "background-failure" || e.type === "background-recovered",
  );

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

describe("running.reportBackgroundRecovered(report)", () => {
  test("emits one background-recovered event per run of failures of its source, after them, and nothing for a source not failing", async () => {
    const h = await started();
    const first = new Error("connection terminated");
    const second = new Error("connection refused");
    const other = new Error("relation does not exist");
    // Nothing failed yet: a success reported is no recovery.
    h.running.reportBackgroundRecovered({ source: "outbox:events" });
    h.running.reportBackgroundFailure({ source: "outbox:events", error: first });
    h.running.reportBackgroundFailure({ source: "outbox:events", error: second });
    h.running.reportBackgroundFailure({ source: "outbox:audit", error: other });
    h.running.reportBackgroundRecovered({ source: "outbox:events" });
    // Recovered already: each later success reported is nothing more.
    h.running.reportBackgroundRecovered({ source: "outbox:events" });
    // A new failure of it is a new run, recovered once again, while stopping too.
    h.running.reportBackgroundFailure({ source: "outbox:events", error: first });
    h.running.onStopping(() => {
      h.running.reportBackgroundRecovered({ source: "outbox:events" });
      h.running.reportBackgroundRecovered({ source: "outbox:audit" });
    });
    await h.running.stop();
    expect(background(h.events)).toEqual([
      { type: "background-failure", source: "outbox:events", error: first },
      { type: "background-failure", source: "outbox:events", error: second },
      { type: "background-failure", source: "outbox:audit", error: other },
      { type: "background-recovered", source: "outbox:events" },
      { type: "background-failure", source: "outbox:events", error: first },
      { type: "background-recovered", source: "outbox:events" },
      { type: "background-recovered", source: "outbox:audit" },
    ]);
  });

  test("refuses a report without its source, naming it, and emits nothing", async () => {
    const h = await started();
    h.running.reportBackgroundFailure({ source: "outbox:events", error: new Error("x") });
    for (const report of [{ source: "" }, { source: 7 }, {}, undefined, null]) {
      const reporting = () => h.running.reportBackgroundRecovered(report as never);
      expect(reporting).toThrow(RustStreamError);
      expect(reporting).toThrow(/needs \{ source \}/);
    }
    expect(h.events.filter((e) => e.type === "background-recovered")).toEqual([]);
    await h.running.stop();
  });
});

describe("ConnectOptions.onBackground", () => {
  test("a broker's background reports are the app's background-failure and background-recovered events", async () => {
    let given: ConnectOptions | undefined;
    const app = new RustStream({ name: "relay", version: "0.0.0" }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber("rows").handle(() => {});
      },
    );
    const h = await startInProcess(app, {
      connect: (broker, options) => {
        given = options;
        return (broker as MemoryBroker).connectInProcess({
          ...options,
          coordinator: new CountingCoordinator(),
          clock: new ManualClock(),
        });
      },
    });
    const gone = new Error("consumer deleted");
    given?.onBackground?.failed("nats:ORDERS/billing", gone);
    given?.onBackground?.recovered("nats:ORDERS/billing");
    // Nothing failing under that name: no recovery to report.
    given?.onBackground?.recovered("nats:ORDERS/other");
    await h.running.stop();
    expect(background(h.events)).toEqual([
      { type: "background-failure", source: "nats:ORDERS/billing", error: gone },
      { type: "background-recovered", source: "nats:ORDERS/billing" },
    ]);
  });
});
