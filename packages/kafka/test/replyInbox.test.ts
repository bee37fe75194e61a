import { type Delivery, HeaderMap, headerNames, isRustStreamError } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { Kafka, logLevel } from "kafkajs";
import { describe, expect, it } from "vitest";
import {
  type ConnectedKafkaBroker,
  KafkaBroker,
  type KafkaPublisher,
  KafkaTopic,
} from "../src/index.js";
import { brokerFor, connect, everywhere, type Where } from "./connections.js";

// The reply inbox on its own (what request/reply answers is the conformance suite's): a connection's
// own inbox is a topic of one partition, made at its first request and gone at shutdown with
// nothing left on the cluster; a fixed replyTopic is shared by requesters, each reading all of its
// partitions from its end and keeping only its own replies, and stays. On both engines and
// in-process.

/** The topics and groups the cluster holds, through a client of its own. */
async function onCluster(where: Where, broker: KafkaBroker) {
  if (where === "in-process") {
    // Another connection to the same stand-in, which lives in the broker object.
    const connected = await connect(where, broker);
    try {
      return {
        partitions: (topic: string) => connected.link.admin.partitions(topic),
        groups: [] as string[],
      };
    } finally {
      await connected.shutdown();
    }
  }
  const admin = new Kafka({
    brokers: requireEnv("KAFKA_BROKERS").split(","),
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    const metadata = await admin.fetchTopicMetadata();
    const counts = new Map(metadata.topics.map((t) => [t.name, t.partitions.length]));
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId);
    return { partitions: async (topic: string) => counts.get(topic), groups };
  } finally {
    await admin.disconnect();
  }
}

/** Takes the next request and answers it with `body` (to `partition` of its reply-to, if given). */
async function answerNext(
  requests: AsyncIterator<Delivery>,
  publisher: KafkaPublisher,
  body: (request: Delivery) => string,
  partition?: number,
): Promise<Delivery> {
  const next = await requests.next();
  if (next.done) throw new Error("the request subscription ended");
  const request = next.value;
  await request.ack();
  await publisher.publish({
    name: request.headers.getString(headerNames.replyTo)!,
    payload: bytes(body(request)),
    headers: new HeaderMap().set(
      headerNames.correlationId,
      request.headers.get(headerNames.correlationId)!,
    ),
    ...(partition === undefined ? {} : { options: { partition } }),
  });
  return request;
}

async function responder(connected: ConnectedKafkaBroker, name: string) {
  const subscription = await connected.subscribe(new KafkaTopic(name, { group: `g-${name}` }));
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  return { requests: subscription[Symbol.asyncIterator](), subscription, publisher };
}

it("a replyTopic that is no legal topic name is refused when the broker is built", () => {
  expect(() => new KafkaBroker({ brokers: "127.0.0.1:9092", replyTopic: "" })).toThrow(
    /replyTopic cannot be empty/,
  );
  expect(() => new KafkaBroker({ brokers: "127.0.0.1:9092", replyTopic: "no spaces" })).toThrow(
    /replyTopic "no spaces" is not a legal Kafka topic name/,
  );
});

for (const where of everywhere) {
  describe(where, () => {
    it("a connection's own inbox: one partition, made at the first request, gone at shutdown", async () => {
      const broker = brokerFor(where);
      const connected = await connect(where, broker);
      const name = uniqueName(`ask-${where}`);
      let inbox: string | undefined;
      try {
        const { requests, subscription, publisher } = await responder(connected, name);
        const requester = await connected.defaultPublishPolicy().pair(connected);
        const asked = requester.request({ name, payload: bytes("ping") }, { timeoutMs: 20_000 });
        const request = await answerNext(requests, publisher, (r) => `pong:${text(r.payload)}`);
        const reply = await asked;
        expect(text(reply.payload)).toBe("pong:ping");
        inbox = request.headers.getString(headerNames.replyTo);
        expect(inbox).toMatch(/^ruststream-inbox-[0-9a-f-]{36}$/);
        expect(reply.name).toBe(inbox);
        // A second request reuses the inbox.
        const again = requester.request({ name, payload: bytes("two") }, { timeoutMs: 20_000 });
        const second = await answerNext(requests, publisher, (r) => `pong:${text(r.payload)}`);
        expect(text((await again).payload)).toBe("pong:two");
        expect(second.headers.getString(headerNames.replyTo)).toBe(inbox);
        expect(await (await onCluster(where, broker)).partitions(inbox!)).toBe(1);
        await subscription.close();
      } finally {
        await connected.shutdown();
      }
      const after = await onCluster(where, broker);
      expect(await after.partitions(inbox!), "the inbox topic is deleted").toBeUndefined();
      // librdkafka reads it without joining a group; kafkajs's group of one is deleted with it.
      expect(after.groups).not.toContain(inbox);
    });

    it("a fixed replyTopic: requesters share it, each gets only its own replies, and it stays", async () => {
      const replyTopic = uniqueName(`replies-${where}`);
      const broker = brokerFor(where, { replyTopic });
      const setup = await connect(where, broker);
      const name = uniqueName(`ask-${where}`);
      const [one, two] = [await connect(where, broker), await connect(where, broker)];
      try {
        // The topic exists before anybody asks (made here with two partitions), and holds a reply
        // from before: neither requester may take it.
        await (
          await setup.subscribe(
            new KafkaTopic(replyTopic, { group: `g-${replyTopic}`, create: { partitions: 2 } }),
          )
        ).close();
        const setupPublisher = await setup.defaultPublishPolicy().pair(setup);
        await setupPublisher.publish({
          name: replyTopic,
          payload: bytes("stale"),
          headers: new HeaderMap().set(headerNames.correlationId, "nobody-waits-for-this"),
        });
        const { requests, subscription, publisher } = await responder(setup, name);
        const options = { timeoutMs: 20_000 };
        const a = (await one.defaultPublishPolicy().pair(one)).request(
          { name, payload: bytes("a") },
          options,
        );
        const b = (await two.defaultPublishPolicy().pair(two)).request(
          { name, payload: bytes("b") },
          options,
        );
        // One reply on each partition: every requester reads all of them.
        const seen = [
          await answerNext(requests, publisher, (r) => `re:${text(r.payload)}`, 0),
          await answerNext(requests, publisher, (r) => `re:${text(r.payload)}`, 1),
        ];
        for (const request of seen) {
          expect(request.headers.getString(headerNames.replyTo)).toBe(replyTopic);
        }
        expect(text((await a).payload)).toBe("re:a");
        expect(text((await b).payload)).toBe("re:b");
        await subscription.close();
      } finally {
        await Promise.all([one.shutdown(), two.shutdown()]);
        await setup.shutdown();
      }
      const after = await onCluster(where, broker);
      expect(await after.partitions(replyTopic), "the shared reply topic stays").toBe(2);
    });

    it("a request whose publish is refused fails with the refusal, and the inbox still serves", async () => {
      const connected = await connect(where, brokerFor(where));
      try {
        const name = uniqueName(`ask-${where}`);
        const { requests, subscription, publisher } = await responder(connected, name);
        const requester = await connected.defaultPublishPolicy().pair(connected);
        let error: unknown;
        try {
          await requester.request(
            { name: "not a topic", payload: bytes("x") },
            { timeoutMs: 60_000 },
          );
        } catch (e) {
          error = e;
        }
        expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
        const asked = requester.request({ name, payload: bytes("ok") }, { timeoutMs: 20_000 });
        await answerNext(requests, publisher, () => "fine");
        expect(text((await asked).payload)).toBe("fine");
        await subscription.close();
      } finally {
        await connected.shutdown();
      }
    });
  });
}
