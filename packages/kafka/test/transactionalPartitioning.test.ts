import { type Delivery, isRustStreamError } from "@ruststream/core";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedKafkaBroker,
  KafkaPublish,
  KafkaTopic,
  type Partitioner,
  partitionOfKey,
} from "../src/index.js";
import { brokerFor, connect, everywhere } from "./connections.js";
import { itTransactional } from "./transactionalSkips.js";

// A keyed message published in a transaction lands where its publish policy's partitioner puts it,
// as a direct publish does: murmur2 by default, CRC32 under "consistent-random", whichever
// partitioner the broker itself names. Two ways into a transaction: `publisher.transaction()` (both
// engines and in-process), and an output of the exactly-once pipeline, staged for the transaction
// of the subscription that commits its input (librdkafka and in-process; kafkajs refuses that
// mode). The second is the one that can differ: the subscription's producer is opened with the
// broker's settings, and one transaction carries the outputs of every publisher. Such an output for
// a topic the cluster does not have yet has no partition count to be placed by: it is refused.

const PARTITIONS = 6;
const keys = Array.from({ length: 24 }, (_, i) => `key-${i}`);

/** [the broker's partitioner, the policy's, the one that must place the keys]. */
const cases: ReadonlyArray<
  readonly [Partitioner | undefined, Partitioner | undefined, Partitioner]
> = [
  [undefined, undefined, "murmur2"],
  [undefined, "consistent-random", "consistent-random"],
  ["consistent-random", "murmur2", "murmur2"],
];

function label(name: Partitioner | undefined): string {
  return name ?? "default";
}

/** Where `partitioner` puts each key over the topic's partitions. */
function expected(partitioner: Partitioner): Map<string, number> {
  return new Map(keys.map((k) => [k, partitionOfKey(partitioner, bytes(k), PARTITIONS)]));
}

it("the keys tell the two partitioners apart (else the cases below could not fail)", () => {
  const murmur = expected("murmur2");
  const crc = expected("consistent-random");
  expect(keys.filter((k) => murmur.get(k) !== crc.get(k)).length).toBeGreaterThan(keys.length / 2);
});

/** A reader of `topic`, subscribed (creating the topic with its partitions) before anything is published. */
async function reader(connected: ConnectedKafkaBroker, topic: string) {
  return connected.subscribe(
    new KafkaTopic(topic, {
      group: `g-${topic}`,
      start: "earliest",
      create: { partitions: PARTITIONS },
    }),
  );
}

/** Reads one record per key: the partition each key's record landed on. */
async function landed(
  subscription: Awaited<ReturnType<typeof reader>>,
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  while (found.size < keys.length) {
    const next = await subscription.next();
    if (next.done) throw new Error("the reader's subscription ended");
    const delivery: Delivery = next.value;
    const key = delivery.partitionKey;
    if (key === undefined) throw new Error(`a record without a key: ${text(delivery.payload)}`);
    found.set(text(key), delivery.partition ?? -1);
    await delivery.ack();
  }
  return found;
}

/** A one-partition input read by a transactional subscription, holding `payloads`. */
async function transactionalInput(
  connected: ConnectedKafkaBroker,
  input: string,
  payloads: readonly string[],
) {
  const inputs = await connected.subscribe(
    new KafkaTopic(input, {
      group: `g-${input}`,
      commit: "transactional",
      start: "earliest",
      create: { partitions: 1 },
    }),
  );
  const direct = await connected.defaultPublishPolicy().pair(connected);
  for (const payload of payloads) await direct.publish({ name: input, payload: bytes(payload) });
  return inputs;
}

async function nextOf(inputs: AsyncIterator<Delivery>): Promise<Delivery> {
  const next = await inputs.next();
  if (next.done) throw new Error("the input subscription ended");
  return next.value;
}

function policy(partitioner: Partitioner | undefined, transactionalId?: string): KafkaPublish {
  return new KafkaPublish({
    ...(partitioner === undefined ? {} : { partitioner }),
    ...(transactionalId === undefined ? {} : { transactionalId }),
  });
}

for (const where of everywhere) {
  describe(where, () => {
    for (const [brokerPartitioner, policyPartitioner, places] of cases) {
      it(`publisher.transaction(): broker ${label(brokerPartitioner)}, policy ${label(policyPartitioner)}: keys land by ${places}`, async () => {
        const connected = await connect(
          where,
          brokerFor(
            where,
            brokerPartitioner === undefined ? {} : { partitioner: brokerPartitioner },
          ),
        );
        try {
          const topic = uniqueName(`tx-keys-${where}`);
          const subscription = await reader(connected, topic);
          const publisher = await policy(policyPartitioner, uniqueName(`tx-${where}`)).pair(
            connected,
          );
          await publisher.transaction(async (tx) => {
            for (const key of keys) {
              await tx.publish({ name: topic, payload: bytes(`v-${key}`), partitionKey: key });
            }
          });
          expect(await landed(subscription)).toEqual(expected(places));
        } finally {
          await connected.shutdown();
        }
      });
    }

    // kafkajs refuses commit "transactional" (exactlyOnce.test.ts): registered there as skipped.
    const transactional = itTransactional(where);

    for (const [brokerPartitioner, policyPartitioner, places] of cases) {
      transactional(
        `exactly-once outputs: broker ${label(brokerPartitioner)}, policy ${label(policyPartitioner)}: keys land by ${places}`,
        async () => {
          const connected = await connect(
            where,
            brokerFor(where, {
              transactionalId: uniqueName(`eos-keys-${where}`),
              ...(brokerPartitioner === undefined ? {} : { partitioner: brokerPartitioner }),
            }),
          );
          try {
            const input = uniqueName(`eos-keys-in-${where}`);
            const output = uniqueName(`eos-keys-out-${where}`);
            const outputs = await reader(connected, output);
            const inputs = await transactionalInput(connected, input, keys);
            const publisher = await policy(policyPartitioner).pair(connected);
            // One output per input, keyed by the input's payload, staged on the input's behalf.
            for (let handled = 0; handled < keys.length; handled++) {
              const delivery = await nextOf(inputs);
              await publisher.publish({
                name: output,
                payload: bytes("out"),
                partitionKey: text(delivery.payload),
                cause: delivery,
              });
              await delivery.ack();
            }
            expect(await landed(outputs)).toEqual(expected(places));
          } finally {
            await connected.shutdown();
          }
        },
      );
    }

    transactional(
      "an output placed by another partitioner than the broker's, for a topic that does not exist, is refused naming the fix",
      async () => {
        const connected = await connect(
          where,
          brokerFor(where, { transactionalId: uniqueName(`eos-nokeys-${where}`) }),
        );
        try {
          const input = uniqueName(`eos-nokeys-in-${where}`);
          const missing = uniqueName(`eos-nokeys-missing-${where}`);
          const inputs = await transactionalInput(connected, input, ["in"]);
          const publisher = await policy("consistent-random").pair(connected);
          const delivery = await nextOf(inputs);
          const refused = await publisher
            .publish({ name: missing, payload: bytes("out"), partitionKey: "k", cause: delivery })
            .then(
              () => undefined,
              (error: unknown) => error,
            );
          expect(isRustStreamError(refused, "publish-refused"), String(refused)).toBe(true);
          expect((refused as Error).message).toContain(`topic "${missing}" does not exist yet`);
          expect((refused as Error).message).toContain("create the topic first");
          await delivery.ack();
        } finally {
          await connected.shutdown();
        }
      },
    );
  });
}
