// The events a metrics or health package is built on: the app's life, its brokers' connections, its
// subscriptions, a handler's start paired with its outcome, and dead letters the broker moves.
import { describe, expect, test } from "vitest";
import { brokerMark } from "../../src/brokerEntry.js";
import {
  type Broker,
  type ConnectedBroker,
  type ConnectionListener,
  type ConnectOptions,
  consoleLogger,
  type DeadLetterEvent,
  drop,
  MemoryBroker,
  MemoryQueue,
  type RuntimeEvent,
  RustStream,
  retry,
  retryAfter,
} from "../../src/index.js";
import { startInProcess } from "./harness.js";

/**
 * A memory broker whose client the test drives: it keeps the listener the app connects it with, as
 * a broker's client layer reports to it, and connects the memory broker without it.
 */
class DrivenBroker implements Broker {
  readonly [brokerMark] = "memory";
  client: ConnectionListener | undefined;
  readonly #inner = new MemoryBroker();

  async connect(options?: ConnectOptions): Promise<ConnectedBroker> {
    this.client = options?.onState;
    return this.#inner.connect();
  }
}

function app() {
  return new RustStream({ name: "test", version: "0.0.0" });
}

const lifecycle = (events: readonly RuntimeEvent[]) =>
  events.flatMap((e) => {
    if (e.type === "app-state") return [`app ${e.state}`];
    if (e.type === "broker-connection") return [`${e.broker} ${e.state}`];
    if (e.type === "subscription") return [`${e.subscriber} ${e.state}`];
    return [];
  });

const deadLetters = (events: readonly RuntimeEvent[]) =>
  events
    .filter((e): e is DeadLetterEvent => e.type === "dead-letter")
    .map((e) => `${e.movedBy} ${e.destination} ${e.reason}`);

describe("runtime events", () => {
  test("the app's life: starting, brokers and subscriptions up, ready after the startup hooks, then down", async () => {
    const events: RuntimeEvent[] = [];
    let stateInHook: string | undefined;
    const a = app()
      .broker(new MemoryBroker(), (b) => {
        b.subscriber("a").handle(() => {});
        b.subscriber("b").handle(() => {});
      })
      .broker(new MemoryBroker(), (b) => {
        b.subscriber("c").handle(() => {});
      })
      .afterStartup((running) => {
        stateInHook = running.state;
        events.push({ type: "app-state", state: "starting", failure: "marker: the hook ran" });
      });
    a.observe((e) => events.push(e));
    const running = await a.start();
    expect(stateInHook).toBe("starting");
    expect(running.state).toBe("ready");
    await running.stop();
    expect(lifecycle(events)).toEqual([
      "app starting",
      "memory connected",
      "memory-2 connected",
      "a started",
      "b started",
      "c started",
      "app starting", // the hook's marker: ready comes after the hooks
      "app ready",
      "app stopping",
      "memory closed",
      "memory-2 closed",
      "app stopped",
    ]);
  });

  test("a connection lost and regained while the app runs: each change once, logged, then closed at the stop", async () => {
    const lines: string[] = [];
    const broker = new DrivenBroker();
    const a = new RustStream({
      name: "test",
      version: "0.0.0",
      logger: consoleLogger({ write: (line) => lines.push(line) }),
    }).broker(broker, (b) => {
      b.subscriber("in").handle(() => {});
    });
    const events: RuntimeEvent[] = [];
    a.observe((e) => events.push(e));
    const running = await a.start();
    broker.client?.({ state: "reconnecting", reason: "connect ECONNREFUSED" });
    broker.client?.({ state: "reconnecting", reason: "connect ECONNREFUSED, again" });
    broker.client?.({ state: "connected" });
    broker.client?.({ state: "lost", reason: "WRONGPASS" });
    await running.stop();
    expect(
      events.flatMap((e) =>
        e.type === "broker-connection"
          ? [`${e.broker} (${e.kind}) ${e.state}${e.reason === undefined ? "" : `: ${e.reason}`}`]
          : [],
      ),
    ).toEqual([
      "memory (memory) connected",
      "memory (memory) reconnecting: connect ECONNREFUSED",
      "memory (memory) connected",
      "memory (memory) lost: WRONGPASS",
      // This broker's connection tells no listener of its shutdown: the runtime says it.
      "memory (memory) closed",
    ]);
    const log = lines.filter((line) => line.includes("broker connection"));
    expect(log).toEqual([
      expect.stringMatching(
        /WARN {2}broker connection down: its client is reconnecting broker=memory state=reconnecting reason="connect ECONNREFUSED"/,
      ),
      expect.stringMatching(/INFO {2}broker connection back broker=memory state=connected/),
      expect.stringMatching(
        /WARN {2}broker connection lost: its client gave up or is refused for good .* broker=memory state=lost reason=WRONGPASS/,
      ),
    ]);
  });

  test("a start that fails ends stopped, with the failure, and closes what it connected", async () => {
    const events: RuntimeEvent[] = [];
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber("in").handle(() => {});
    });
    a.afterStartup(() => {
      throw new Error("the hook refuses");
    });
    a.observe((e) => events.push(e));
    await expect(a.start()).rejects.toThrow("the hook refuses");
    expect(lifecycle(events)).toEqual([
      "app starting",
      "memory connected",
      "in started",
      "app stopping",
      "memory closed",
      "app stopped",
    ]);
    const refused = app().broker(new MemoryBroker(), (b) => {
      b.subscriber("in");
    });
    const seen: RuntimeEvent[] = [];
    refused.observe((e) => seen.push(e));
    await expect(refused.start()).rejects.toThrow("no handler");
    expect(
      seen.map((e) => (e.type === "app-state" ? [e.state, String(e.failure)] : e.type)),
    ).toEqual([
      ["starting", "undefined"],
      ["stopped", expect.stringContaining("no handler")],
    ]);
  });

  test("inFlight counts the deliveries in a handler, from its start to its outcome", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber("in")
        .workers(3)
        .maxAttempts(2)
        .handle(async (m) => {
          if (m === "hold") await released;
          if (m === "throws") throw new Error("no");
          if (m === "retries") return retry();
          return undefined;
        });
      b.subscriber("batches")
        .batch(3)
        .handle(async () => {
          await released;
        });
    });
    const events: RuntimeEvent[] = [];
    a.observe((e) => events.push(e));
    const h = await startInProcess(a);
    const inFlight = (name: string) => {
      const started = events.find(
        (e) => e.type === "subscription" && e.subscriber === name && e.state === "started",
      );
      if (started?.type !== "subscription") throw new Error(`no start of ${name}`);
      return started.inFlight();
    };
    expect([inFlight("in"), inFlight("batches")]).toEqual([0, 0]);
    await h.publish("in", "throws");
    await h.advance(100); // the thrown error's backoff
    await h.publish("in", "retries");
    await h.publishRaw("in", "{not json"); // never reaches a handler
    expect(inFlight("in")).toBe(0);
    void h.running.publish("in", "hold");
    void h.running.publish("in", "hold");
    void h.running.publish("batches", 1);
    void h.running.publish("batches", 2);
    const deadline = Date.now() + 2000;
    while (inFlight("in") + inFlight("batches") < 4 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect([inFlight("in"), inFlight("batches")]).toEqual([2, 2]);
    release();
    await h.quiet();
    expect([inFlight("in"), inFlight("batches")]).toEqual([0, 0]);
    expect(h.outcomes("in").map((e) => `${e.outcome} ${e.attempt} ${e.handled}`)).toEqual([
      "retry-after 1 true",
      "drop 2 true", // the second attempt of "throws" is the last: dropped, no dead letter declared
      "retry 1 true",
      "drop 2 true",
      "drop 1 false", // the payload that did not decode
      "ack 1 true",
      "ack 1 true",
    ]);
    await h.running.stop();
  });

  test("on a source whose broker moves failing messages, what the broker moves is reported as a dead letter", async () => {
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber(new MemoryQueue("jobs"))
        .maxAttempts(2)
        .deadLetter("jobs-dlq")
        .handle((m) => {
          if (m === "drop") return drop();
          if (m === "later") return retryAfter(10);
          throw new Error("always");
        });
    });
    const h = await startInProcess(a);
    await h.publish("jobs", "throws");
    await h.publish("jobs", "drop");
    await h.publish("jobs", "later");
    await h.advance(10);
    expect(deadLetters(h.events)).toEqual([
      "broker jobs-dlq max-attempts",
      "broker jobs-dlq rejected",
      "broker jobs-dlq max-attempts",
    ]);
    // Each report is a message the broker really moved: one dead letter each, nothing left behind.
    expect(h.published("jobs-dlq").map((m) => new TextDecoder().decode(m.payload))).toEqual([
      '"throws"',
      '"drop"',
      '"later"',
    ]);
    expect(h.outcomes("jobs").map((e) => `${e.outcome} ${e.attempt}`)).toEqual([
      "retry 1",
      "retry 2",
      "drop 1",
      "retry-after 1",
      "retry-after 2",
    ]);
    await h.running.stop();
  });

  test("dead letters the runtime publishes say so", async () => {
    const a = app().broker(new MemoryBroker(), (b) => {
      b.subscriber("in")
        .maxAttempts(1)
        .deadLetter("dlq")
        .handle(() => {
          throw new Error("no");
        });
    });
    const h = await startInProcess(a);
    await h.publish("in", 1);
    expect(deadLetters(h.events)).toEqual(["runtime dlq max-attempts"]);
    await h.running.stop();
  });
});
