import { type Delivery, isRustStreamError } from "@ruststream/core";
import { skippedName } from "@ruststream/testing/conformance";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { Kafka, logLevel } from "kafkajs";
import { describe, expect, it } from "vitest";
import { type ConnectedKafkaBroker, KafkaTopic } from "../src/index.js";
import type { KafkaTopicSubscription } from "../src/topic/topicSubscription.js";
import { brokerFor, connect, everywhere } from "./connections.js";
import { clientLimit, refusingTopic, tooLarge } from "./refusingTopic.js";
import { fencingInProcess, itTransactional } from "./transactionalSkips.js";

// The exactly-once pipeline (commit "transactional"): a consumer handles each input and publishes
// an output on its behalf (the publish cause), and every commit interval one transaction produces
// the outputs and commits the consumed offsets. One window is made to fail for real: an output too
// large for the output topic is refused by the cluster, so the transaction aborts, the partitions go
// back to the last committed offsets and the inputs are handled again (the second time the output
// is small). A read_committed reader must then see every output exactly once, the refused one never,
// and a new member of the group must find every input committed. On librdkafka against the
// cluster and in-process; kafkajs refuses the mode, naming librdkafka, and its tests are registered
// as skipped (not built yet, transactionalSkips.ts). A producer fenced by another with the same
// transactionalId fails the subscription instead of replaying for ever (librdkafka; the stand-in
// models no fencing).

const INPUTS = 20;
const FAILING = "in-7";

/** On the cluster: the usurper of the fencing test, a raw kafkajs producer. */
const kafka = new Kafka({
  clientId: "exactly-once",
  brokers: [requireEnv("KAFKA_BROKERS")],
  logLevel: logLevel.NOTHING,
});

/** The next delivery; `undefined` once the subscription ended or its connection shut down. */
async function take(
  subscription: Awaited<ReturnType<ConnectedKafkaBroker["subscribe"]>>,
): Promise<Delivery | undefined> {
  try {
    const next = await subscription.next();
    return next.done ? undefined : next.value;
  } catch (error) {
    if (isRustStreamError(error, "closed")) return undefined;
    throw error;
  }
}

for (const where of everywhere) {
  describe(where, () => {
    it('commit "transactional" without the broker\'s transactionalId is refused at subscribe, naming it', async () => {
      const connected = await connect(where, brokerFor(where));
      try {
        const topic = uniqueName(`eos-refused-${where}`);
        const refused = await connected
          .subscribe(new KafkaTopic(topic, { group: `g-${topic}`, commit: "transactional" }))
          .then(
            () => undefined,
            (error: unknown) => error,
          );
        expect(isRustStreamError(refused, "invalid-argument"), String(refused)).toBe(true);
        expect((refused as Error).message).toContain("transactionalId");
        expect((refused as Error).message).toContain('commit "tracked"');
      } finally {
        await connected.shutdown();
      }
    });

    // kafkajs cannot commit a window before a rebalance hands its partitions on (engines.ts).
    if (where === "kafkajs") {
      it('commit "transactional" is refused on kafkajs, naming librdkafka and tracked', async () => {
        const connected = await connect(
          where,
          brokerFor(where, { transactionalId: uniqueName("eos-kafkajs") }),
        );
        try {
          const topic = uniqueName("eos-kafkajs");
          const refused = await connected
            .subscribe(new KafkaTopic(topic, { group: `g-${topic}`, commit: "transactional" }))
            .then(
              () => undefined,
              (error: unknown) => error,
            );
          expect(isRustStreamError(refused, "unsupported"), String(refused)).toBe(true);
          expect((refused as Error).message).toContain('use engine "librdkafka"');
          expect((refused as Error).message).toContain('commit "tracked"');
        } finally {
          await connected.shutdown();
        }
      });
    }

    itTransactional(where)(
      "each output is produced exactly once while a window fails and is replayed",
      async () => {
        const input = uniqueName(`eos-in-${where}`);
        const output = uniqueName(`eos-out-${where}`);
        await refusingTopic(where, output);
        const broker = brokerFor(where, {
          transactionalId: uniqueName(`eos-${where}`),
          maxMessageBytes: clientLimit,
        });
        const source = new KafkaTopic(input, {
          group: `g-${input}`,
          commit: "transactional",
          start: "earliest",
          create: { partitions: 2 },
        });

        const processor = await connect(where, broker);
        const reading = await connect(where, broker);
        const attempts = new Map<string, number>();
        let failed = 0;
        try {
          const sub = (await processor.subscribe(source)) as KafkaTopicSubscription;
          const reader = await reading.subscribe(
            new KafkaTopic(output, { group: `g-${output}`, commit: "tracked", start: "earliest" }),
          );
          const publisher = await processor.defaultPublishPolicy().pair(processor);
          for (let i = 0; i < INPUTS; i++) {
            await publisher.publish({
              name: input,
              payload: bytes(`in-${i}`),
              partitionKey: `k${i}`,
            });
          }

          // The pipeline: one output per input, published on the input's behalf, then the ack.
          const pipeline = (async () => {
            for (;;) {
              const d = await take(sub);
              if (d === undefined) return;
              const id = text(d.payload);
              const attempt = (attempts.get(id) ?? 0) + 1;
              attempts.set(id, attempt);
              const payload =
                id === FAILING && attempt === 1 ? tooLarge(where) : bytes(`out-${id}`);
              await publisher.publish({ name: output, payload, cause: d });
              await d.ack();
            }
          })();

          const seen: string[] = [];
          while (new Set(seen).size < INPUTS) {
            const d = await take(reader);
            if (d === undefined) throw new Error("the reader's subscription ended");
            seen.push(text(d.payload));
            await d.ack();
          }
          failed = sub.failedTransactions;
          // Shutdown commits the last window; nothing is produced after it.
          await processor.shutdown();
          await pipeline;

          const sentinelPublisher = await reading.defaultPublishPolicy().pair(reading);
          await sentinelPublisher.publish({ name: output, payload: bytes("sentinel") });
          for (;;) {
            const d = await take(reader);
            if (d === undefined) throw new Error("the reader's subscription ended");
            await d.ack();
            if (text(d.payload) === "sentinel") break;
            seen.push(text(d.payload));
          }
          const expected = Array.from({ length: INPUTS }, (_, i) => `out-in-${i}`);
          expect([...seen].sort(), "every output once, the refused one never").toEqual(
            [...expected].sort(),
          );
        } finally {
          await processor.shutdown();
          await reading.shutdown();
        }
        // The window really failed, and its inputs were handled again; the replay's transaction,
        // on the same transactional id, committed at once (the refusal left no harm behind).
        expect(failed, "transactions that failed").toBe(1);
        expect(attempts.get(FAILING)).toBeGreaterThanOrEqual(2);
        expect(attempts.size).toBe(INPUTS);

        // Every input's offset was committed with its output: a new member reads only what is new.
        const after = await connect(where, broker);
        try {
          const sub = await after.subscribe(source);
          const publisher = await after.defaultPublishPolicy().pair(after);
          await publisher.publish({ name: input, payload: bytes("late"), partitionKey: "k0" });
          const d = await take(sub);
          expect(text(d!.payload)).toBe("late");
          await d!.ack();
        } finally {
          await after.shutdown();
        }
      },
    );
  });
}

for (const where of everywhere) {
  describe(where, () => {
    const name =
      "a producer fenced by another with the same transactionalId fails the subscription, naming the id";
    if (where === "in-process") {
      it.skip(skippedName(name, fencingInProcess), () => {});
      return;
    }
    itTransactional(where)(name, async () => {
      const input = uniqueName(`eos-fenced-${where}`);
      const transactionalId = uniqueName(`eos-fenced-${where}`);
      const connected = await connect(where, brokerFor(where, { transactionalId }));
      const usurper = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
      try {
        const sub = await connected.subscribe(
          new KafkaTopic(input, {
            group: `g-${input}`,
            commit: "transactional",
            start: "earliest",
            create: { partitions: 1 },
          }),
        );
        const publisher = await connected.defaultPublishPolicy().pair(connected);
        // The first window opens the subscription's producer under the id.
        await publisher.publish({ name: input, payload: bytes("first") });
        const first = await take(sub);
        if (first === undefined) throw new Error("the subscription ended");
        await publisher.publish({ name: `${input}.out`, payload: bytes("out"), cause: first });
        await first.ack();
        await publisher.transaction(async (tx) =>
          tx.publish({ name: `${input}.out`, payload: bytes("tx") }),
        );
        // Another producer initialises the same id: the subscription's is fenced off.
        await usurper.connect();
        await (await usurper.transaction()).abort();
        await publisher.publish({ name: input, payload: bytes("second") });
        let failure: unknown;
        for (;;) {
          try {
            const d = await take(sub);
            if (d === undefined) throw new Error("the subscription ended without failing");
            await publisher.publish({ name: `${input}.out`, payload: bytes("out"), cause: d });
            await d.ack();
          } catch (error) {
            failure = error;
            break;
          }
        }
        expect(isRustStreamError(failure, "broker-failure"), String(failure)).toBe(true);
        expect((failure as Error).message).toContain("transactions in a row failed");
        expect((failure as Error).message).toContain("transactionalId");
      } finally {
        await usurper.disconnect();
        await connected.shutdown();
      }
    });
  });
}
