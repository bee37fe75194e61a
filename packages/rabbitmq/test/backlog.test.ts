import {
  type BacklogCounts,
  type Broker,
  isRustStreamError,
  type RuntimeEvent,
  RustStream,
  retryAfter,
  type SubscriptionEvent,
  systemClock,
  deadLetter as toDeadLetter,
} from "@ruststream/core";
import { brokerMark, CountingCoordinator, reportsBacklog } from "@ruststream/core/broker";
import { uniqueName } from "@ruststream/tooling-testkit";
import { brokers } from "@ruststream/tooling-testkit/brokers";
import { describe, expect, it } from "vitest";
import {
  type ConnectedRabbitBroker,
  RabbitBroker,
  RabbitQueue,
  RabbitQuorumQueue,
  type RabbitSource,
  RabbitStream,
} from "../src/index.js";
import { type Mode, modes } from "./modes.js";

// A queue's backlog as the app's subscription answers it (what @ruststream/metrics' gauge reads):
// the queue's ready messages, its delayed retries' wait queues, a quorum queue's dead letter, on
// the node and on the in-process stand-in, which must answer the same counts.

/** Queues that delete themselves a while after their last consumer: little left on the node. */
const expires = { "x-expires": 120_000 };

async function until(step: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${step}: still waiting after 10 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The mode's broker for an app started as a service starts (its publishes resolve on the confirm,
 * with handlers held): the node, or a stand-in of its own.
 */
function brokerOf(mode: Mode): Broker<ConnectedRabbitBroker> {
  const broker = new RabbitBroker({ url: mode.url(), declare: true });
  if (mode.name === "real node") return broker;
  return {
    [brokerMark]: "rabbitmq",
    connect: () =>
      broker.connectInProcess({ clock: systemClock, coordinator: new CountingCoordinator() }),
  };
}

const connect = (mode: Mode) => brokerOf(mode).connect();

interface Held {
  readonly running: { publish(name: string, message: string): Promise<unknown> };
  readonly backlog: () => Promise<BacklogCounts>;
  readonly handled: string[];
  readonly events: RuntimeEvent[];
  /** Lets the held handlers return. */
  readonly release: () => void;
}

/**
 * An app on `mode` reading `source` (prefetch 2, two workers): with `deadLetter`, a message its
 * handler dead-letters goes there (the quorum queue's server moves it); a message retried in a minute waits in a wait queue; two
 * are held in their handlers (the prefetch full: the node sends nothing more), then three ready
 * ones are published behind them. `then` runs with the app in that state.
 */
async function scenario(
  mode: Mode,
  source: RabbitSource,
  deadLetter: string | undefined,
  then: (held: Held) => Promise<void>,
): Promise<void> {
  const events: RuntimeEvent[] = [];
  const entered: string[] = [];
  const handled: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const app = new RustStream({ name: "backlog", version: "1.0.0" }).broker(brokerOf(mode), (b) => {
    const subscriber = b.subscriber<string>(source).workers(2);
    const mounted =
      deadLetter === undefined ? subscriber : subscriber.maxAttempts(3).deadLetter(deadLetter);
    mounted.handle(async (m) => {
      if (m === "fail") return toDeadLetter("poison");
      if (m === "later") return retryAfter(60_000);
      if (m.startsWith("hold")) {
        entered.push(m);
        await gate;
      }
      handled.push(m);
      return undefined;
    });
  });
  app.observe((e) => events.push(e));
  const running = await app.start();
  const started = events.find(
    (e): e is SubscriptionEvent => e.type === "subscription" && e.state === "started",
  );
  const backlog = started?.backlog;
  if (backlog === undefined) throw new Error("the subscription event carries no backlog");
  const settled = (message: string) => () =>
    events.some((e) => e.type === "outcome" && e.message === message);
  try {
    if (deadLetter !== undefined) {
      await running.publish(source.name, "fail");
      await until("the failed message's outcome", settled("fail"));
      // The node moves it to the dead letter after the reject: wait for it there.
      await until("the dead letter", async () => (await backlog())["dead-lettered"] === 1);
    }
    await running.publish(source.name, "later");
    await until("the delayed retry", settled("later"));
    await running.publish(source.name, "hold 1");
    await running.publish(source.name, "hold 2");
    await until("both handlers", () => entered.length === 2);
    for (const m of ["a", "b", "c"]) await running.publish(source.name, m);
    await then({ running, backlog, handled, events, release });
  } finally {
    release();
    await running.stop();
  }
}

describe.each(modes)("a queue's backlog ($name)", (mode) => {
  it("a quorum queue: ready, scheduled (a delayed retry's wait queue) and dead-lettered; no leased", async () => {
    const queue = uniqueName("backlog-quorum");
    const source = new RabbitQuorumQueue(queue, { prefetch: 2, arguments: expires });
    await scenario(mode, source, `${queue}.dlq`, async ({ backlog }) => {
      expect(await backlog()).toEqual({ ready: 3, scheduled: 1, "dead-lettered": 1 });
    });
  });

  it("a classic queue: ready and scheduled; its dead letter is the runtime's, not the queue's", async () => {
    const queue = uniqueName("backlog-classic");
    const source = new RabbitQueue(queue, { prefetch: 2, arguments: expires });
    await scenario(mode, source, undefined, async ({ backlog }) => {
      expect(await backlog()).toEqual({ ready: 3, scheduled: 1 });
    });
  });

  it("a queue without a delayed retry on this connection has no scheduled count", async () => {
    const queue = uniqueName("backlog-plain");
    const app = new RustStream({ name: "plain", version: "1.0.0" }).broker(brokerOf(mode), (b) => {
      b.subscriber(new RabbitQueue(queue, { arguments: expires })).handle(() => {});
    });
    const events: RuntimeEvent[] = [];
    app.observe((e) => events.push(e));
    const running = await app.start();
    try {
      const started = events.find(
        (e): e is SubscriptionEvent => e.type === "subscription" && e.state === "started",
      );
      expect(await started?.backlog?.()).toEqual({ ready: 0 });
    } finally {
      await running.stop();
    }
  });

  it("a stream's subscription answers no backlog: its count is its length", async () => {
    const connected = await connect(mode);
    const stream = uniqueName("backlog-stream");
    try {
      const subscription = await connected.subscribe(
        new RabbitStream(stream, { arguments: { "x-max-age": "1m" } }),
      );
      expect(reportsBacklog(subscription)).toBe(false);
      expect(
        reportsBacklog(
          await connected.subscribe(new RabbitQueue(`${stream}-q`, { arguments: expires })),
        ),
      ).toBe(true);
    } finally {
      await connected.shutdown();
      if (mode.name === "real node") {
        await brokers.rabbitmq.management(`/api/queues/%2F/${encodeURIComponent(stream)}`, {
          method: "DELETE",
        });
      }
    }
  });

  it("a queue the server does not have: the count rejects naming it", async () => {
    const connected = await connect(mode);
    const missing = uniqueName("never-declared");
    try {
      const error = await connected.link.queueCounts([missing]).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRustStreamError(error) && error.code).toBe("invalid-argument");
      expect((error as Error).message).toBe(
        `queue "${missing}" does not exist on the server (NOT_FOUND - no queue '${missing}' in vhost '/'): declare it (declare: true on the descriptor or the broker), or create it as the descriptor describes`,
      );
    } finally {
      await connected.shutdown();
    }
  });
});

describe("a queue deleted under the app (real node)", () => {
  const mode = modes.find((m) => m.name === "real node") as Mode;

  it("its dead letter deleted: the backlog rejects naming it, and the consumer goes on", async () => {
    const queue = uniqueName("backlog-gone");
    const dlq = `${queue}.dlq`;
    const source = new RabbitQuorumQueue(queue, { prefetch: 2, arguments: expires });
    await scenario(mode, source, dlq, async ({ running, backlog, handled, events, release }) => {
      await brokers.rabbitmq.management(`/api/queues/%2F/${encodeURIComponent(dlq)}`, {
        method: "DELETE",
      });
      const error = await backlog().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRustStreamError(error) && error.code).toBe("invalid-argument");
      expect((error as Error).message).toContain(
        `reading the backlog of queue "${queue}": queue "${dlq}" does not exist on the server`,
      );
      await running.publish(queue, "after");
      expect(handled).toEqual([]);
      // Released: the held two are acked on the channel they came on (had the failed declare
      // closed it, their acks would fail and they would run again), then the rest is handled.
      release();
      await until("the message published after", () => handled.includes("after"));
      expect([...handled].sort()).toEqual(["a", "after", "b", "c", "hold 1", "hold 2"]);
      const holds = events.flatMap((e) =>
        e.type === "outcome" && typeof e.message === "string" && e.message.startsWith("hold")
          ? [[e.outcome, e.attempt]]
          : [],
      );
      expect(holds).toEqual([
        ["ack", 1],
        ["ack", 1],
      ]);
    });
  });
});
