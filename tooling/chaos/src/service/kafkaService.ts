// The service's Kafka side: one consumer group on the three-node cluster, `tracked` or
// `transactional`. Under `transactional` the service also produces: each input's output (the
// message itself, under its key) goes to `<topic>.out` in the window's transaction, which is what
// the mode promises exactly once; the runner reads that topic back.
import { type HandlerContext, type Outcome, type RustStream, reply } from "@ruststream/core";
import { KafkaBroker, KafkaTopic } from "@ruststream/kafka";
import type { ServiceConfig } from "./config.js";

/** The scenario's topic: four partitions, two per replica, each on all three nodes. */
export const KAFKA_PARTITIONS = 4;
export const KAFKA_REPLICATION = 3;

/** Where a transactional service's outputs go. */
export const outputTopic = (key: string): string => `${key}.out`;

type Handle = (message: unknown, ctx: HandlerContext) => Promise<Outcome | undefined>;

/**
 * Consumer settings a deployment of a group on this cluster would choose, each for a reason:
 * - session 6 s (the broker's minimum), heartbeat 1 s: librdkafka's 45 s default would leave a
 *   killed replica's partitions unread for 45 s before the group gives them to the other;
 * - auto-commit every second (5 s by default): `tracked` stores each settled position and
 *   librdkafka commits what is stored on that interval, so it sizes what a kill hands out again.
 */
const consumerConfig = {
  "session.timeout.ms": 6_000,
  "heartbeat.interval.ms": 1_000,
  "auto.commit.interval.ms": 1_000,
} as const;

export function declareKafka(app: RustStream, config: ServiceConfig, handle: Handle): void {
  const transactional = config.broker === "kafka-transactional";
  // Stable per replica across its restarts, unique among the running ones: a restarted replica's
  // producer fences the killed one's and aborts the transaction it left open.
  const replica = process.env.CHAOS_REPLICA ?? "0";
  const broker = new KafkaBroker({
    brokers: config.address,
    engine: "librdkafka",
    group: config.group,
    ...(transactional ? { transactionalId: `${config.group}-${config.key}-r${replica}` } : {}),
  });
  const topic = new KafkaTopic(config.key, {
    commit: transactional ? "transactional" : "tracked",
    start: "earliest",
    create: { partitions: KAFKA_PARTITIONS, replicationFactor: KAFKA_REPLICATION },
    config: consumerConfig,
  });
  app.broker(broker, (b) => {
    if (!transactional) {
      b.subscriber(topic).handle(handle);
      return;
    }
    b.subscriber(topic)
      .reply(outputTopic(config.key))
      .handle(async (message, ctx) => {
        const outcome = await handle(message, ctx);
        if (outcome !== undefined) return outcome;
        // `handle` printed its line, so the body is the runner's { k, s }: the output keeps its key.
        const { k } = message as { k: string };
        return reply(message, { partitionKey: k });
      });
  });
}
