import { jetstreamManager } from "@nats-io/jetstream";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  type DeliverPolicy,
  type JetStreamDelivery,
  JetStreamPosition,
  type JetStreamSubscription,
  JetStreamTimePosition,
  NatsPublish,
  OrderedJetStreamSubject,
} from "../src/index.js";
import { rawClient } from "./env.live.js";
import { openedPerTest, targets } from "./targets.js";

// An ordered consumer: the client's own ephemeral consumer, in stream order, taking no acks.

const opened = openedPerTest();

/** A connection, a stream of its own (memory), and a publisher that stores on it. */
async function setUp(connect: () => Promise<ConnectedNatsBroker>) {
  const subject = uniqueName("ordered");
  const connected = await connect();
  opened.connections.push(connected);
  opened.streams.push(subject);
  await connected.link.ensureStream(subject, [subject], { storage: "memory" });
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  const publish = async (...payloads: string[]) => {
    for (const p of payloads) await publisher.publish({ name: subject, payload: bytes(p) });
  };
  const subscribe = async (options: { pullExpiresMs?: number; deliver?: DeliverPolicy } = {}) =>
    (await connected.subscribe(
      new OrderedJetStreamSubject(subject, { stream: subject, ...options }),
    )) as JetStreamSubscription;
  return { subject, connected, publish, subscribe };
}

/**
 * A stream of subjects `a`, `b`, `c` under its name (a1 a2 b1 b2 b3 a3 c1: the last of each at 5, 6
 * and 7), and an ordered consumer on all of them starting `"last-per-subject"`.
 */
async function lastPerSubject(connect: () => Promise<ConnectedNatsBroker>) {
  const stream = uniqueName("ordered");
  const connected = await connect();
  opened.connections.push(connected);
  opened.streams.push(stream);
  await connected.link.ensureStream(stream, [`${stream}.>`], { storage: "memory" });
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  const publish = async (subject: string, ...payloads: string[]) => {
    for (const p of payloads) {
      await publisher.publish({ name: `${stream}.${subject}`, payload: bytes(p) });
    }
  };
  await publish("a", "a1", "a2");
  await publish("b", "b1", "b2", "b3");
  await publish("a", "a3");
  await publish("c", "c1");
  const subscription = (await connected.subscribe(
    new OrderedJetStreamSubject(`${stream}.>`, {
      stream,
      pullExpiresMs: 1000,
      deliver: "last-per-subject",
      redeliverTo: `${stream}.retry`,
    }),
  )) as JetStreamSubscription;
  return { stream, publish, subscription };
}

/** The next `n` deliveries, as `payload@sequence`. */
async function take(subscription: JetStreamSubscription, n: number): Promise<string[]> {
  const got: string[] = [];
  while (got.length < n) {
    const d = (await subscription.next()).value as JetStreamDelivery | undefined;
    if (d === undefined) break;
    got.push(`${text(d.payload)}@${d.streamPosition.sequence}`);
  }
  return got;
}

/**
 * A time past what was stored so far by a whole ms: the stored times are the server's, on this
 * machine's clock.
 */
async function pastStored(): Promise<Date> {
  const stored = Date.now();
  while (Date.now() < stored + 2) await new Promise((resolve) => setTimeout(resolve, 1));
  return new Date();
}

for (const [where, connect] of targets) {
  describe(`ordered consumers, ${where}`, () => {
    it("hand over what the stream holds, then what arrives, in stream order; every settle answers unsupported", async () => {
      const { publish, subscribe } = await setUp(connect);
      await publish("1", "2", "3");
      const subscription = await subscribe();
      await publish("4", "5", "6");
      const got: JetStreamDelivery[] = [];
      while (got.length < 6) got.push((await subscription.next()).value as JetStreamDelivery);
      expect(got.map((d) => `${text(d.payload)}@${d.streamPosition.sequence}`)).toEqual([
        "1@1",
        "2@2",
        "3@3",
        "4@4",
        "5@5",
        "6@6",
      ]);
      expect(got.map((d) => d.redeliveryCount)).toEqual([1, 1, 1, 1, 1, 1]);
      // Ack policy none: nothing to settle at the server, as on a core subject.
      const [a, b, c, d] = got as [JetStreamDelivery, ...JetStreamDelivery[]];
      expect(await a.ack()).toBe("unsupported");
      expect(await b?.nack({ requeue: true })).toBe("unsupported");
      expect(await c?.nack({ requeue: false })).toBe("unsupported");
      expect(await d?.nackAfter(10)).toBe("unsupported");
      // Nothing comes back: the next delivery is the one published next.
      await publish("end");
      expect(await take(subscription, 1)).toEqual(["end@7"]);
    });

    it('a "last-per-subject" start hands over each subject\'s last message, then what arrives', async () => {
      const { publish, subscription } = await lastPerSubject(connect);
      expect(await take(subscription, 3)).toEqual(["b3@5", "a3@6", "c1@7"]);
      await publish("b", "b4");
      expect(await take(subscription, 1)).toEqual(["b4@8"]);
    });

    it("a seek by sequence creates the consumer again from there", async () => {
      const { subject, publish, subscribe } = await setUp(connect);
      await publish("a", "b", "c", "d");
      const subscription = await subscribe();
      expect(await take(subscription, 4)).toEqual(["a@1", "b@2", "c@3", "d@4"]);
      await subscription.seek(new JetStreamPosition(subject, 2n));
      expect(await take(subscription, 3)).toEqual(["b@2", "c@3", "d@4"]);
      await publish("e");
      expect(await take(subscription, 1)).toEqual(["e@5"]);
    });
  });
}

describe("ordered consumers, the real server", () => {
  const real = targets[0]?.[1] as () => Promise<ConnectedNatsBroker>;

  it("a consumer deleted under the subscription is created again by the client after the last message read: no gap, no duplicate", async () => {
    const { subject, publish, subscribe } = await setUp(real);
    await publish("1", "2", "3");
    // Pulls of 1000 ms: the client misses the deleted consumer's heartbeats within about a second.
    const subscription = await subscribe({ pullExpiresMs: 1000 });
    expect(await take(subscription, 3)).toEqual(["1@1", "2@2", "3@3"]);
    const deleted = subscription.consumerName;
    const nc = await rawClient();
    try {
      await (await jetstreamManager(nc)).consumers.delete(subject, deleted);
    } finally {
      await nc.close();
    }
    await publish("4", "5", "6");
    expect(await take(subscription, 3)).toEqual(["4@4", "5@5", "6@6"]);
    expect(subscription.consumerName).not.toBe(deleted);
  });

  // The subscription pulls once asked for its first delivery: a consumer deleted before that is
  // deleted before the first message read, which the client creates again from its start sequence.
  const deleteConsumer = async (subject: string, subscription: JetStreamSubscription) => {
    const nc = await rawClient();
    try {
      await (await jetstreamManager(nc)).consumers.delete(subject, subscription.consumerName);
    } finally {
      await nc.close();
    }
  };

  it('a "last" start deleted before the first message read is created again from the last message, not the stream\'s first', async () => {
    const { subject, publish, subscribe } = await setUp(real);
    await publish("1", "2", "3");
    const subscription = await subscribe({ pullExpiresMs: 1000, deliver: "last" });
    const deleted = subscription.consumerName;
    await deleteConsumer(subject, subscription);
    await publish("4");
    expect(await take(subscription, 2)).toEqual(["3@3", "4@4"]);
    expect(subscription.consumerName).not.toBe(deleted);
  });

  it("a { time } start deleted before the first message read is created again from the first message stored then", async () => {
    const { subject, publish, subscribe } = await setUp(real);
    await publish("a", "b");
    const at = await pastStored();
    await publish("c", "d");
    const subscription = await subscribe({ pullExpiresMs: 1000, deliver: { time: at } });
    await deleteConsumer(subject, subscription);
    await publish("e");
    expect(await take(subscription, 3)).toEqual(["c@3", "d@4", "e@5"]);
  });

  it("a { time } start deleted after a message read is created again after it", async () => {
    const { subject, publish, subscribe } = await setUp(real);
    await publish("a");
    const at = await pastStored();
    await publish("b", "c");
    const subscription = await subscribe({ pullExpiresMs: 1000, deliver: { time: at } });
    expect(await take(subscription, 2)).toEqual(["b@2", "c@3"]);
    await deleteConsumer(subject, subscription);
    await publish("d");
    expect(await take(subscription, 1)).toEqual(["d@4"]);
  });

  it("a \"last-per-subject\" start deleted before the first message read is created again with each subject's last message, not the stream's first", async () => {
    const { stream, publish, subscription } = await lastPerSubject(real);
    const deleted = subscription.consumerName;
    await deleteConsumer(stream, subscription);
    // A subject of its own: stored before the consumer is created again or after, it follows.
    await publish("d", "d1");
    expect(await take(subscription, 4)).toEqual(["b3@5", "a3@6", "c1@7", "d1@8"]);
    expect(subscription.consumerName).not.toBe(deleted);
  });

  it('a "last-per-subject" start deleted after a message read is created again after it', async () => {
    const { stream, publish, subscription } = await lastPerSubject(real);
    expect(await take(subscription, 3)).toEqual(["b3@5", "a3@6", "c1@7"]);
    await deleteConsumer(stream, subscription);
    await publish("a", "a4");
    expect(await take(subscription, 1)).toEqual(["a4@8"]);
  });

  it('a "new" start deleted before the first message read is created again after what the stream held', async () => {
    const { subject, publish, subscribe } = await setUp(real);
    await publish("old");
    const subscription = await subscribe({ pullExpiresMs: 1000, deliver: "new" });
    await deleteConsumer(subject, subscription);
    await publish("new");
    expect(await take(subscription, 1)).toEqual(["new@2"]);
  });

  it("a seek by time creates the consumer again from the first message stored then", async () => {
    const { publish, subscribe } = await setUp(real);
    await publish("a", "b");
    const at = await pastStored();
    await publish("c", "d");
    const subscription = await subscribe();
    expect(await take(subscription, 4)).toEqual(["a@1", "b@2", "c@3", "d@4"]);
    await subscription.seek(new JetStreamTimePosition(at));
    expect(await take(subscription, 2)).toEqual(["c@3", "d@4"]);
  });
});

describe("OrderedJetStreamSubject", () => {
  it("refuses what names no stream, a wildcard with nowhere for a retry copy, and a bad start, naming the fix", () => {
    const refusal = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return [(error as { code?: string }).code, (error as Error).message];
      }
      return undefined;
    };
    expect(
      refusal(() => new OrderedJetStreamSubject("orders.created", {} as { stream: string })),
    ).toEqual([
      "invalid-argument",
      expect.stringContaining(
        'needs the stream that stores "orders.created": { stream: "ORDERS" }',
      ),
    ]);
    expect(refusal(() => new OrderedJetStreamSubject("orders.*", { stream: "ORDERS" }))).toEqual([
      "invalid-argument",
      expect.stringContaining("give redeliverTo"),
    ]);
    expect(
      refusal(
        () =>
          new OrderedJetStreamSubject("orders.created", {
            stream: "ORDERS",
            deliver: { sequence: 0 },
          }),
      ),
    ).toEqual(["invalid-argument", expect.stringContaining("OrderedJetStreamSubject deliver:")]);
    const ok = new OrderedJetStreamSubject("orders.*", {
      stream: "ORDERS",
      redeliverTo: "orders.retry",
    });
    expect([ok.name, ok.redeliveryAddress, ok.durable, ok.bindings]).toEqual([
      "orders.*",
      "orders.retry",
      undefined,
      { nats: { subjects: ["orders.*"], stream: "ORDERS", ordered: true } },
    ]);
  });
});
