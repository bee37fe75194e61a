import { describe, expect, test } from "vitest";
import { isTestableBroker } from "../../src/brokerEntry.js";
import {
  bytes,
  HeaderMap,
  type LogFields,
  type Logger,
  RustStream,
  silentLogger,
} from "../../src/index.js";
import {
  CopyOnlyBroker,
  type HandOversAsked,
  handedOverHeader,
  takenBackHeader,
} from "./copyOnlyBroker.js";
import { startInProcess } from "./harness.js";

// A broker may take a delivery back right before its handler runs (Delivery.handOver answers
// false): the runtime then neither runs the handler nor settles the delivery. Or hand it over after
// a wait (true): one piece of the app's work from the wait to its outcome.

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

describe("a delivery its broker hands over after a wait", () => {
  test("each held handler counts once, in flight and in the drain timeout's warning, and nothing after it settles", async () => {
    const held = 3;
    const warnings: LogFields[] = [];
    const logger: Logger = {
      ...silentLogger,
      warn: (fields: LogFields | string) => {
        if (typeof fields !== "string") warnings.push(fields);
      },
      child: () => logger,
    };
    let running = 0;
    let allRunning = (): void => {};
    const allRan = new Promise<void>((resolve) => {
      allRunning = resolve;
    });
    const app = new RustStream({ name: "h", version: "0", shutdownTimeoutMs: 30 }).broker(
      new CopyOnlyBroker(),
      (b) => {
        b.subscriber("in", { codec: bytes })
          .workers(held)
          .handle(
            (_m, ctx) =>
              new Promise<void>((resolve) => {
                if (++running === held) allRunning();
                // Held until the drain timeout aborts it.
                ctx.signal.addEventListener("abort", () => resolve());
              }),
          );
      },
    );
    const h = await startInProcess(app, { logger });
    const connected = h.running.connection();
    if (!isTestableBroker(connected)) throw new Error("not testable");
    for (let i = 0; i < held; i++) {
      connected.inject({
        name: "in",
        payload: new TextEncoder().encode(`held ${i}`),
        headers: new HeaderMap({ [handedOverHeader]: "yes" }),
      });
    }
    await allRan;
    expect(h.running.inFlight).toBe(held);
    const report = await h.running.stop();
    expect(report.aborted).toBe(true);
    const atTimeout = warnings.filter((w) => "running" in w && "timeoutMs" in w);
    expect(atTimeout).toEqual([{ running: held, timeoutMs: 30 }]);
    // Settled on the abort: nothing left counted.
    expect(h.running.inFlight).toBe(0);
    expect(h.outcomes("in").map((e) => e.outcome)).toEqual(["ack", "ack", "ack"]);
  });
});

// A batch handler's deliveries are asked too, each told the batch it travels with (a broker that
// waits for the deliveries handed over before one must not wait for those of its own batch, which
// settle after the handler): the handler runs on those handed over, and not at all on none.
describe("a batch whose broker takes some deliveries back before its handler runs", () => {
  /** Injects the messages at once, so one pull takes them all as one batch. */
  function injectAll(h: Awaited<ReturnType<typeof startInProcess>>, messages: [string, string?][]) {
    const connected = h.running.connection();
    if (!isTestableBroker(connected)) throw new Error("not testable");
    for (const [payload, header] of messages) {
      connected.inject({
        name: "in",
        payload: new TextEncoder().encode(payload),
        headers: new HeaderMap(header === undefined ? {} : { [header]: "yes" }),
      });
    }
  }

  async function batchApp(asked: HandOversAsked) {
    const batches: string[][] = [];
    const app = new RustStream({ name: "h", version: "0" }).broker(
      new CopyOnlyBroker(undefined, asked),
      (b) => {
        b.subscriber("in", { codec: bytes })
          .batch(8)
          .handle((messages) => {
            batches.push(messages.map((m) => new TextDecoder().decode(m)));
          });
      },
    );
    return { batches, h: await startInProcess(app) };
  }

  test("runs on the deliveries handed over, in order, each asked with its batch; those taken back are neither handled nor settled", async () => {
    const asked: HandOversAsked = [];
    const { batches, h } = await batchApp(asked);
    injectAll(h, [["one"], ["taken", takenBackHeader], ["held", handedOverHeader], ["four"]]);
    await h.quiet();
    const batch = ["one", "taken", "held", "four"];
    expect(asked).toEqual(batch.map((payload) => ({ payload, batch })));
    expect(batches).toEqual([["one", "held", "four"]]);
    // The runtime settled the three it handed over, and not the one taken back.
    expect(h.outcomes("in").map((e) => e.outcome)).toEqual(["ack", "ack", "ack"]);
    await h.running.stop();
  });

  test("is not run when every delivery of it is taken back; the next batch is", async () => {
    const asked: HandOversAsked = [];
    const { batches, h } = await batchApp(asked);
    injectAll(h, [
      ["taken 1", takenBackHeader],
      ["taken 2", takenBackHeader],
    ]);
    await h.quiet();
    injectAll(h, [["fine"]]);
    await h.quiet();
    expect(asked.map((a) => a.payload)).toEqual(["taken 1", "taken 2", "fine"]);
    expect(batches).toEqual([["fine"]]);
    expect(h.outcomes("in").map((e) => e.outcome)).toEqual(["ack"]);
    await h.running.stop();
  });
});
