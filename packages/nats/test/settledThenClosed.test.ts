import { jetstream } from "@nats-io/jetstream";
import { ManualClock, RustStream } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { TestApp } from "@ruststream/testing";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  JetStreamSubject,
  NatsBroker,
  NatsPublish,
} from "../src/index.js";
import { consumerState, eventually, rawClient } from "./env.live.js";
import { openedPerTest } from "./targets.js";

// The package holds a turn's JetStream settlements (acks, naks, terms, working beats) and writes
// them together at the turn's end. Settled, then shut down in the same turn: every settlement must
// still reach the server, each with its verb. The check is a sentinel published after the shutdown
// and read by a new connection on the same durable: what comes before it is what the server holds
// back (here, the requeued ones alone); on the real server also the consumer's own count of
// deliveries it waits to hear of, read once the shutdown resolved. Last, a whole app stopped from
// its last handler, while the runtime's acks of that turn are held. With the write and flush
// before a stop taken out (settlementsWritten emptied) the three real-server cases fail.

const ackWaitMs = 30_000;
const count = 300;

/** Connections to one server: the shared one, or one stand-in (each broker object has its own). */
const servers: [
  string,
  () => { connect: () => Promise<ConnectedNatsBroker>; clock?: ManualClock },
][] = [
  [
    "the real server",
    () => {
      const broker = new NatsBroker({ servers: requireEnv("NATS_URL") });
      return { connect: () => broker.connect() };
    },
  ],
  [
    "the stand-in",
    () => {
      const broker = new NatsBroker({ servers: "nats://in-process.invalid:4222" });
      const clock = new ManualClock();
      return {
        connect: () => broker.connectInProcess({ coordinator: new CountingCoordinator(), clock }),
        clock,
      };
    },
  ],
];

const { connections, streams } = openedPerTest();

for (const [where, server] of servers) {
  describe(`${count} deliveries settled, then the connection shut down at once, ${where}`, () => {
    /**
     * Publishes `count` messages, takes every delivery, settles each as `verbOf` says (in one
     * synchronous loop) and shuts the connection down in the same turn. Then publishes a sentinel
     * and returns what a new connection on the same durable reads up to it, the sentinel included.
     */
    async function settleShutDownAndReread(
      verbOf: (i: number) => "ack" | "requeue" | "drop",
      afterShutdown: (stream: string) => Promise<void> = async () => {},
    ): Promise<{ body: string; attempt: number | undefined }[]> {
      const { connect, clock } = server();
      const stream = uniqueName("settled");
      streams.push(stream);
      const source = new JetStreamSubject(stream, {
        stream,
        durable: "worker",
        ackWaitMs,
        declare: { subjects: [stream], storage: "memory" },
      });
      const first = await connect();
      connections.push(first);
      const subscription = await first.subscribe(source);
      const publisher = await new NatsPublish({ jetStream: true }).pair(first);
      for (let i = 0; i < count; i++)
        await publisher.publish({ name: stream, payload: bytes(`${i}`) });
      const deliveries = [];
      for (let i = 0; i < count; i++) {
        const d = (await subscription.next()).value;
        if (d === undefined) throw new Error(`delivery ${i} of ${count} did not come`);
        expect(text(d.payload)).toBe(`${i}`);
        deliveries.push(d);
      }
      const settled = deliveries.map((d, i) => {
        const verb = verbOf(i);
        return verb === "ack" ? d.ack() : d.nack({ requeue: verb === "requeue" });
      });
      await first.shutdown();
      await Promise.all(settled);
      await afterShutdown(stream);
      // A lost ack would come again once the ack wait passed: on the stand-in it has.
      clock?.advance(ackWaitMs + 1);
      const second = await connect();
      connections.push(second);
      const again = await new NatsPublish({ jetStream: true }).pair(second);
      await again.publish({ name: stream, payload: bytes("sentinel") });
      const reader = await second.subscribe(source);
      const reread: { body: string; attempt: number | undefined }[] = [];
      while (reread.at(-1)?.body !== "sentinel") {
        const d = (await reader.next()).value;
        if (d === undefined) throw new Error("the reader ended before the sentinel");
        reread.push({ body: text(d.payload), attempt: d.redeliveryCount });
        await d.ack();
      }
      return reread;
    }

    it("acks and drops all reach the server: the sentinel comes first, nothing waits for an ack", async () => {
      const reread = await settleShutDownAndReread(
        (i) => (i % 7 === 3 ? "drop" : "ack"),
        async (stream) => {
          // Read once the shutdown resolved, not polled: it has them by then, or they are lost.
          if (where !== "the real server") return;
          expect(await consumerState(stream, "worker")).toMatchObject({
            redelivered: 0,
            ackPending: 0,
            ackFloor: count,
          });
        },
      );
      expect(reread).toEqual([{ body: "sentinel", attempt: 1 }]);
    });

    it("each keeps its verb: the requeued ones alone come again before the sentinel", async () => {
      const verbOf = (i: number) => (i % 5 === 1 ? "requeue" : i % 7 === 3 ? "drop" : "ack");
      const reread = await settleShutDownAndReread(verbOf);
      const requeued = Array.from({ length: count }, (_, i) => `${i}`).filter(
        (_, i) => verbOf(i) === "requeue",
      );
      expect(reread.at(-1)).toEqual({ body: "sentinel", attempt: 1 });
      const before = reread.slice(0, -1);
      // The server hands a requeued message to the pulls still open at once: one the closing
      // subscription had read ahead it gave back in turn (a third delivery), the rest come second.
      expect(before.map((r) => r.body).sort()).toEqual(requeued.sort());
      for (const r of before) expect(r.attempt ?? 0).toBeGreaterThanOrEqual(2);
    });
  });
}

describe(`an app stopped from the handler of the last of ${count} messages, on the real server`, () => {
  it("leaves nothing pending: every ack the runtime made reached the server", async () => {
    const stream = uniqueName("appstop");
    streams.push(stream);
    const handled: number[] = [];
    let stopping: Promise<unknown> | undefined;
    let t: TestApp | undefined;
    const app = new RustStream({ name: "appstop", version: "1.0.0" }).broker(
      new NatsBroker({ servers: requireEnv("NATS_URL") }),
      (b) => {
        b.subscriber<{ n: number }>(
          new JetStreamSubject(stream, {
            stream,
            durable: "worker",
            ackWaitMs,
            declare: { subjects: [stream], storage: "memory" },
          }),
        ).handle(async (m) => {
          handled.push(m.n);
          // The stop begins while this handler runs, and the acks of its turn are still held.
          if (m.n === count - 1) stopping = t?.stop();
        });
      },
    );
    t = await TestApp.startLive(app, { withinMs: 20_000 });
    try {
      const nc = await rawClient();
      try {
        const js = jetstream(nc);
        for (let n = 0; n < count; n++) await js.publish(stream, JSON.stringify({ n }));
      } finally {
        await nc.close();
      }
      await eventually(() => stopping !== undefined, 20_000, "the last message's handler");
      await stopping;
    } finally {
      // A failure before the last handler still stops the app.
      if (stopping === undefined) await t.stop();
    }
    expect(handled).toEqual(Array.from({ length: count }, (_, n) => n));
    expect(await consumerState(stream, "worker")).toMatchObject({
      redelivered: 0,
      ackPending: 0,
      ackFloor: count,
    });
  });
});
