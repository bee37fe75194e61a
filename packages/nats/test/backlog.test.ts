import { AckPolicy, jetstreamManager } from "@nats-io/jetstream";
import {
  type BacklogCounts,
  type Broker,
  isRustStreamError,
  type RuntimeEvent,
  RustStream,
  type SubscriptionEvent,
  systemClock,
} from "@ruststream/core";
import {
  brokerMark,
  CountingCoordinator,
  reportsBacklog,
  reportsWaits,
} from "@ruststream/core/broker";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, test } from "vitest";
import {
  type ConnectedNatsBroker,
  JetStreamSubject,
  KvWatch,
  NatsBroker,
  NatsSubject,
} from "../src/index.js";
import { deleteStreams, eventually, rawClient } from "./env.live.js";
import { OwnServer } from "./ownServer.js";

// A JetStream subscription's backlog (what @ruststream/metrics' gauge reads) from its consumer's
// info, and its messages' waits from their delivery info: the same steps on the real server and
// on the in-process stand-in, which must answer the same counts.

const streams: string[] = [];
afterEach(async () => {
  await deleteStreams(...streams.splice(0));
});

interface Seen {
  readonly counts: BacklogCounts;
  readonly waits: readonly number[];
}

/**
 * One app on `broker`, its consumer taking at most 3 messages unacknowledged: one message fails
 * its first attempt and is given back with a `nak` delayed by a minute, two are held in their
 * handlers (two workers), then three more are published, which the server holds back.
 */
async function scenario(broker: Broker): Promise<Seen> {
  const subject = uniqueName("backlog");
  streams.push(subject);
  const events: RuntimeEvent[] = [];
  const entered: string[] = [];
  let failed = 0;
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const app = new RustStream({ name: "backlog", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber<string>(
      new JetStreamSubject(subject, {
        stream: subject,
        durable: "backlog",
        maxAckPending: 3,
        declare: { subjects: [subject], storage: "memory" },
      }),
    )
      .workers(2)
      .maxAttempts(3)
      .onFailure({ backoff: { initialMs: 60_000, maxMs: 60_000 } })
      .handle(async (m) => {
        if (m === "retry") {
          failed++;
          throw new Error("not now");
        }
        entered.push(m);
        await held;
      });
  });
  app.observe((e) => events.push(e));
  const running = await app.start();
  try {
    await running.publish(subject, "retry");
    await eventually(() => failed === 1, 10_000, "the failed attempt");
    await running.publish(subject, "hold 1");
    await eventually(() => entered.length === 1, 10_000, "the first handler");
    await running.publish(subject, "hold 2");
    await eventually(() => entered.length === 2, 10_000, "the second handler");
    for (const m of ["a", "b", "c"]) await running.publish(subject, m);
    const started = events.find(
      (e): e is SubscriptionEvent => e.type === "subscription" && e.state === "started",
    );
    const backlog = started?.backlog;
    if (backlog === undefined) throw new Error("the subscription event carries no backlog");
    const counts = await backlog();
    // Nothing more was handed over meanwhile: both handlers are still held.
    expect(entered).toEqual(["hold 1", "hold 2"]);
    const waits = events.flatMap((e) => (e.type === "wait" ? [e.waitedMs] : []));
    return { counts, waits };
  } finally {
    release();
    await running.stop();
  }
}

/** The retried one and the two held are unacknowledged; the three behind them not delivered. */
const expected: BacklogCounts = { ready: 3, leased: 3 };

function checkWaits(waits: readonly number[]): void {
  // The three first deliveries, each a moment after its publish; the retry's redelivery is a
  // minute away, and no redelivery is reported anyway.
  expect(waits).toHaveLength(3);
  for (const waited of waits) {
    expect(waited).toBeGreaterThanOrEqual(0);
    expect(waited).toBeLessThan(10_000);
  }
}

describe("a JetStream subscription's backlog and waits", () => {
  test("on the server: ready (not delivered, held back by max_ack_pending) and leased (held in handlers, and a nak with a delay)", async () => {
    const seen = await scenario(
      new NatsBroker({ servers: requireEnv("NATS_URL"), publish: { jetStream: true } }),
    );
    expect(seen.counts).toEqual(expected);
    checkWaits(seen.waits);
  });

  test("the in-process stand-in answers the same counts", async () => {
    const server = new NatsBroker({
      servers: "nats://in-process.invalid:4222",
      publish: { jetStream: true },
    });
    const broker: Broker<ConnectedNatsBroker> = {
      [brokerMark]: "nats",
      connect: () =>
        server.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
    };
    const seen = await scenario(broker);
    expect(seen.counts).toEqual(expected);
    checkWaits(seen.waits);
  });

  test("a consumer deleted under the subscription: backlog() rejects, naming it and the check", async () => {
    const subject = uniqueName("gone");
    streams.push(subject);
    const nc = await rawClient();
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: subject, subjects: [subject], storage: "memory" as never });
      // A push consumer bound to as it is: the subscription never makes it again.
      await jsm.consumers.add(subject, {
        durable_name: "bound",
        deliver_subject: `${subject}.deliver`,
        ack_policy: AckPolicy.Explicit,
        ack_wait: 30_000_000_000,
      });
      const connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();
      try {
        const subscription = await connected.subscribe(
          new JetStreamSubject(subject, { stream: subject, durable: "bound", push: true }),
        );
        if (!reportsBacklog(subscription))
          throw new Error("a JetStream subscription answers its backlog");
        expect(await subscription.backlog()).toEqual({ ready: 0, leased: 0 });
        await jsm.consumers.delete(subject, "bound");
        const error = await subscription.backlog().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isRustStreamError(error, "broker-failure")).toBe(true);
        expect(String(error)).toContain(
          `the consumer "bound" on the JetStream stream "${subject}" is gone from the server`,
        );
        expect(String(error)).toContain(`nats consumer ls ${subject}`);
      } finally {
        await connected.shutdown();
      }
    } finally {
      await nc.close();
    }
  });

  test("while the connection is away backlog() rejects at once, saying so; back, it answers again", async () => {
    // A server of the test's own: the shared one is never stopped.
    const server = await OwnServer.start({ jetStream: true });
    try {
      const connected = await new NatsBroker({
        servers: server.url,
        reconnectWaitMs: 100,
      }).connect();
      try {
        const subject = uniqueName("away");
        const subscription = await connected.subscribe(
          new JetStreamSubject(subject, {
            stream: subject,
            durable: "away",
            declare: { subjects: [subject], storage: "file" },
          }),
        );
        if (!reportsBacklog(subscription))
          throw new Error("a JetStream subscription answers its backlog");
        expect(await subscription.backlog()).toEqual({ ready: 0, leased: 0 });
        await server.kill();
        await eventually(() => connected.state === "reconnecting", 10_000, "reconnecting");
        // Not the client's API timeout (5 s, "timeout"): the link's own answer, before any request.
        const error = await subscription.backlog().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isRustStreamError(error, "broker-failure")).toBe(true);
        expect(String(error)).toContain(
          `the counts of the consumer "away" on the JetStream stream "${subject}": the connection to the NATS server is away (disconnected from`,
        );
        await server.restart();
        await eventually(() => connected.state === "connected", 15_000, "connected again");
        expect(await subscription.backlog()).toEqual({ ready: 0, leased: 0 });
      } finally {
        await connected.shutdown();
      }
    } finally {
      await server.dispose();
    }
  });

  test("core NATS subjects and KV watches answer no backlog and report no waits", async () => {
    const connected = await new NatsBroker({
      servers: "nats://in-process.invalid:4222",
    }).connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock });
    try {
      const core = await connected.subscribe(new NatsSubject(uniqueName("core")));
      const watch = await connected.subscribe(
        new KvWatch(uniqueName("bucket"), { declare: { history: 1 } }),
      );
      for (const subscription of [core, watch]) {
        expect(reportsBacklog(subscription)).toBe(false);
        expect(reportsWaits(subscription)).toBe(false);
      }
      const subject = uniqueName("js");
      const jetStream = await connected.subscribe(
        new JetStreamSubject(subject, {
          stream: subject,
          declare: { subjects: [subject], storage: "memory" },
        }),
      );
      expect(reportsBacklog(jetStream)).toBe(true);
      expect(reportsWaits(jetStream)).toBe(true);
    } finally {
      await connected.shutdown();
    }
  });
});
