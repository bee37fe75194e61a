import { requireEnv, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { Kafka, logLevel } from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KafkaBroker, KafkaTopic } from "../src/index.js";

// A partition assigned while a transaction holding the group's offsets for it is still open: under
// read_committed the coordinator answers the start lookup (OffsetFetch, require_stable) with
// UNSTABLE_OFFSET_COMMIT until that transaction ends, and librdkafka retries until the lookup's
// timeout, "Local: Timed out". A member SIGKILLed mid-window leaves such a transaction open until its
// restart fences it (or transaction.timeout.ms aborts it), and the chaos run `kafka-transactional`
// seed 1 once failed its subscription so, which stopped the app (fail-fast). The member now asks
// again until the transaction ended, then starts where it left the offsets.
// The open transaction is a raw kafkajs one, committed by hand after the lookup's 10 s.

const kafka = new Kafka({
  clientId: "unstable-offsets",
  brokers: [requireEnv("KAFKA_BROKERS")],
  logLevel: logLevel.NOTHING,
});
const admin = kafka.admin();
const zombie = kafka.producer({
  transactionalId: uniqueName("unstable-zombie"),
  idempotent: true,
  maxInFlightRequests: 1,
  transactionTimeout: 60_000,
});

beforeAll(async () => {
  await admin.connect();
  await zombie.connect();
});

afterAll(async () => {
  await zombie.disconnect();
  await admin.disconnect();
});

describe("librdkafka", () => {
  it("a partition whose offsets an open transaction holds: the member waits for it, then starts at its offsets", async () => {
    const input = uniqueName("unstable-offsets");
    const group = `g-${input}`;
    await admin.createTopics({ topics: [{ topic: input, numPartitions: 1 }] });
    const feeding = kafka.producer();
    await feeding.connect();
    await feeding.send({
      topic: input,
      messages: Array.from({ length: 6 }, (_, i) => ({ value: `in-${i}` })),
    });
    await feeding.disconnect();

    // The window of a member killed before its commit: offsets sent, the transaction left open.
    const open = await zombie.transaction();
    await open.sendOffsets({
      consumerGroupId: group,
      topics: [{ topic: input, partitions: [{ partition: 0, offset: "3" }] }],
    });

    const connected = await new KafkaBroker({
      brokers: requireEnv("KAFKA_BROKERS"),
      engine: "librdkafka",
      transactionalId: uniqueName("unstable-member"),
    }).connect();
    try {
      const started = Date.now();
      const subscribing = connected.subscribe(
        new KafkaTopic(input, { group, commit: "transactional", start: "earliest" }),
      );
      subscribing.catch(() => undefined);
      // Past the start lookup's own 10 s timeout, then the transaction ends as a restart's fencing
      // or its timeout would end it.
      await sleep(13_000);
      await open.commit();
      const subscription = await subscribing;
      expect(Date.now() - started, "it waited for the transaction").toBeGreaterThanOrEqual(12_000);
      const next = await subscription.next();
      if (next.done) throw new Error("the subscription ended");
      expect(text(next.value.payload), "it starts at the offsets the transaction committed").toBe(
        "in-3",
      );
      await next.value.ack();
    } finally {
      // On the old code the subscription failed before the commit: end the transaction all the same.
      if (open.isActive()) await open.abort().catch(() => undefined);
      await connected.shutdown();
    }
  }, 60_000);
});
