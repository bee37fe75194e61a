// The backlog is an optional member of the broker contract: a subscription that carries its mark
// answers it through the subscription event, one without it gives no `backlog` there and runs as
// before.
import { expect, test } from "vitest";
import { backlogMark, brokerMark, reportsBacklog, waitsMark } from "../../src/brokerEntry.js";
import {
  type BacklogCounts,
  type Broker,
  type ConnectedBroker,
  type ConnectOptions,
  MemoryBroker,
  type RuntimeEvent,
  RustStream,
  type SubscriptionEvent,
} from "../../src/index.js";

const counts: BacklogCounts = { ready: 3, scheduled: 1, leased: 2, "dead-lettered": 4 };

/** A memory broker whose subscriptions answer a backlog: what a broker with the member adds. */
class BacklogBroker implements Broker {
  readonly [brokerMark] = "memory";
  readonly #inner = new MemoryBroker();
  asked = 0;

  async connect(options?: ConnectOptions): Promise<ConnectedBroker> {
    const connected = await this.#inner.connect(options);
    const subscribe = connected.subscribe.bind(connected);
    connected.subscribe = async (source) =>
      Object.assign(await subscribe(source), {
        [backlogMark]: true as const,
        backlog: async () => {
          this.asked++;
          return counts;
        },
      });
    return connected;
  }
}

test("a subscription with the backlog member answers it through its event; one without has none", async () => {
  const events: RuntimeEvent[] = [];
  const reporting = new BacklogBroker();
  const app = new RustStream({ name: "test", version: "0.0.0" })
    .broker(reporting, (b) => {
      b.subscriber("counted").handle(() => {});
    })
    .broker(new MemoryBroker(), (b) => {
      b.subscriber("plain").handle(() => {});
    });
  app.observe((e) => events.push(e));
  const running = await app.start();
  const started = (name: string) =>
    events.find(
      (e): e is SubscriptionEvent =>
        e.type === "subscription" && e.subscriber === name && e.state === "started",
    );
  const counted = started("counted");
  const plain = started("plain");
  expect(counted?.backlog).toBeTypeOf("function");
  // Asked only when called: starting the subscription asked nothing.
  expect(reporting.asked).toBe(0);
  expect(await counted?.backlog?.()).toEqual(counts);
  expect(reporting.asked).toBe(1);
  // The memory broker has no backlog member: the event carries no reader, and the app ran as before.
  expect(plain).toBeDefined();
  expect(plain !== undefined && "backlog" in plain).toBe(false);
  await running.publish("plain", 1);
  await running.whenIdle();
  await running.stop();
});

test("reportsBacklog reads the mark only", () => {
  expect(reportsBacklog({ backlog: async () => ({}) })).toBe(false);
  expect(reportsBacklog({ [backlogMark]: true, backlog: async () => ({}) })).toBe(true);
  expect(reportsBacklog(undefined)).toBe(false);
});

/** A memory broker whose subscriptions report waits: the listener the runtime sets is kept. */
class WaitingBroker implements Broker {
  readonly [brokerMark] = "memory";
  readonly #inner = new MemoryBroker();
  listeners: ((waitedMs: number) => void)[] = [];

  async connect(options?: ConnectOptions): Promise<ConnectedBroker> {
    const connected = await this.#inner.connect(options);
    const subscribe = connected.subscribe.bind(connected);
    connected.subscribe = async (source) =>
      Object.assign(await subscribe(source), {
        [waitsMark]: true as const,
        onWaited: (listener: (waitedMs: number) => void) => {
          this.listeners.push(listener);
        },
      });
    return connected;
  }
}

test("a subscription that reports waits gives a wait event per message taken, only to an observed app", async () => {
  const observed = new WaitingBroker();
  const events: RuntimeEvent[] = [];
  const app = new RustStream({ name: "test", version: "0.0.0" }).broker(observed, (b) => {
    b.subscriber("jobs").handle(() => {});
  });
  app.observe((e) => events.push(e));
  const running = await app.start();
  expect(observed.listeners).toHaveLength(1);
  observed.listeners[0]!(42);
  expect(events.filter((e) => e.type === "wait")).toEqual([
    { type: "wait", subscriber: "jobs", waitedMs: 42 },
  ]);
  await running.stop();

  // Nobody observes: the runtime sets no listener, so the broker has nothing to call per message.
  const unobserved = new WaitingBroker();
  const quiet = await new RustStream({ name: "test", version: "0.0.0" })
    .broker(unobserved, (b) => {
      b.subscriber("jobs").handle(() => {});
    })
    .start();
  expect(unobserved.listeners).toHaveLength(0);
  await quiet.stop();
});
