// The three-node Kafka cluster of tooling/brokers (KRaft, replication 3, min.insync.replicas 2),
// never the single broker others benchmark on. The services create the topic (four partitions on
// all three nodes); the load goes out through an idempotent acks=all producer, so a record the
// cluster confirmed is on two nodes at least and survives one node's death. The cluster's own
// faults: the node leading one of the topic's partitions SIGKILLed and started again, and all three
// nodes SIGKILLed and started again. With network faults the services bootstrap through the fault
// proxy: one proxy per node, on the address each node advertises on its PROXIED listener, so the
// metadata the services read sends all their traffic, to every node, through the proxies, which
// are faulted together. The load, the outputs' reader and the cluster's own replication go direct.
import kafkaJavascript from "@confluentinc/kafka-javascript";
import { KafkaBroker, KafkaPublish, KafkaTopic } from "@ruststream/kafka";
import { brokers } from "@ruststream/tooling-testkit";
import type { Handled } from "../checker.js";
import type { PlannedFault } from "../faults/schedule.js";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { publishLoad } from "../load.js";
import { KAFKA_PARTITIONS, KAFKA_REPLICATION, outputTopic } from "../service/kafkaService.js";
import type { FaultKind } from "./scenario.js";
import type { Target } from "./target.js";

const cluster = brokers["kafka-cluster"];

// librdkafka retries an idempotent producer's records itself, in order, until this timeout; the
// load's own re-send (a second copy, after the node's death was seen) comes only after it, so a
// leader's failover (4-8 s here) costs no duplicate in the topic.
const DELIVERY_TIMEOUT_MS = 60_000;
const RESEND_AFTER_MS = DELIVERY_TIMEOUT_MS + 5_000;
// Each describeTopic is a JVM start (a few seconds); how long it may wait for its condition.
const DESCRIBE_TIMEOUT_MS = 90_000;

export async function kafkaTarget(
  key: string,
  mode: "tracked" | "transactional",
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  log: (line: string) => void,
): Promise<Target> {
  await cluster.up(log);
  const bootstrap = cluster.bootstrap();
  if (proxy !== undefined) await proxy.toxiproxy.proxyGroup(proxy.name, cluster.proxyRoutes());
  const serviceAddress = proxy === undefined ? bootstrap : cluster.proxiedBootstrap();
  if (proxy !== undefined) await assertThroughProxy(serviceAddress);
  const outputs = mode === "transactional" ? await readOutputs(bootstrap, key, log) : undefined;
  return {
    serviceAddress,
    publishBeforeStart: false,
    async publishAll(messages, windowMs, paceLog) {
      const broker = await new KafkaBroker({ brokers: bootstrap, engine: "librdkafka" }).connect();
      const publisher = await new KafkaPublish({
        config: {
          "enable.idempotence": true,
          acks: "all",
          "message.timeout.ms": DELIVERY_TIMEOUT_MS,
        },
      }).pair(broker);
      await publishLoad(broker, publisher, key, messages, windowMs, paceLog, {
        retryAfterMs: RESEND_AFTER_MS,
      });
    },
    // All three nodes SIGKILLed at once and started again on their data: the whole cluster's crash.
    restartBroker: () => cluster.restartAll(),
    ownFaults: {
      "leader-kill": (fault, { hold }) => killLeader(key, inSyncFirst(key, mode), fault, hold, log),
    },
    ...(outputs === undefined ? {} : { outputs: outputs.read }),
    async cleanup() {
      await outputs?.close();
      // The proxies' addresses are the cluster's, fixed: freed for the next scenario.
      await proxy?.toxiproxy.remove(proxy.name);
      // Kept on request (CHAOS_KEEP_TOPICS=1), to read a failed run's topics again afterwards.
      if (process.env.CHAOS_KEEP_TOPICS === undefined)
        await deleteTopics(bootstrap, [key, outputTopic(key)]);
    },
  };
}

/**
 * The topics whose every ISR must hold all three nodes before a node is killed: the scenario's,
 * and those its group and transactions write (the offsets and, under `transactional`, the outputs
 * and the transaction log). A node started again catches up on each at its own pace, and killing
 * another before it is back in sync on one of them takes two nodes of three from it: below
 * `min.insync.replicas` 2, so its writes (a commit, a transaction's marker) stop until one is back.
 */
function inSyncFirst(key: string, mode: "tracked" | "transactional"): string[] {
  return mode === "tracked"
    ? [key, "__consumer_offsets"]
    : [key, outputTopic(key), "__consumer_offsets", "__transaction_state"];
}

/**
 * Kills the node leading one partition of `topic` (which one the seed decides: the fault's planned
 * moment modulo the partitions), holds it down, starts it again. It waits first until all three
 * nodes are in every ISR of `inSync`, so each such fault takes one node of three, never a second
 * one while the first is still catching up.
 */
async function killLeader(
  topic: string,
  inSync: readonly string[],
  fault: PlannedFault<FaultKind>,
  hold: () => Promise<void>,
  log: (line: string) => void,
): Promise<{ target: string; landedAt: number }> {
  // One ClusterAdmin JVM per topic, side by side; the scenario's own topic's answer names the leader.
  const [partitions = []] = await Promise.all([
    cluster.describeTopic(topic, { isr: KAFKA_REPLICATION, timeoutMs: DESCRIBE_TIMEOUT_MS }),
    ...inSync
      .filter((t) => t !== topic)
      .map((t) =>
        cluster
          .describeTopic(t, { isr: KAFKA_REPLICATION, timeoutMs: DESCRIBE_TIMEOUT_MS })
          // A topic the cluster has not made yet (the transaction log, before the first producer's
          // initTransactions) has nothing to be in sync: said, and the kill goes ahead.
          .catch((error: unknown) => {
            log(
              `[chaos] leader-kill: ${t} not described, not waited for: ${String(error).split("\n")[0]}`,
            );
            return [];
          }),
      ),
  ]);
  const partition = partitions[fault.atMs % partitions.length];
  if (partition === undefined || partition.leader < 1 || partition.isr.length < 3) {
    throw new Error(`leader-kill: ${topic} is not led and in sync: ${JSON.stringify(partitions)}`);
  }
  const node = partition.leader;
  const landedAt = performance.now();
  await cluster.killNode(node);
  log(`[chaos] leader-kill: node ${node} (leader of ${topic}[${partition.partition}]) killed`);
  await hold();
  await cluster.startNode(node);
  return { target: `node ${node} (leader of partition ${partition.partition})`, landedAt };
}

/**
 * A read_committed reader of the transactional service's outputs, started before the service so it
 * creates the topic (with the input's layout) and misses nothing: what it reads is what the
 * service's committed transactions made visible.
 */
async function readOutputs(bootstrap: string, key: string, log: (line: string) => void) {
  const broker = await new KafkaBroker({ brokers: bootstrap, engine: "librdkafka" }).connect();
  const subscription = await broker.subscribe(
    new KafkaTopic(outputTopic(key), {
      group: `${key}-outputs`,
      commit: "auto",
      start: "earliest",
      create: { partitions: KAFKA_PARTITIONS, replicationFactor: KAFKA_REPLICATION },
    }),
  );
  // By position (topic:partition:offset), in the order first read: the reader's own redelivery (its
  // consumer rewound after a fault) reads a record again, which is not an output produced twice; two
  // positions holding one output are.
  const read = new Map<string, Handled>();
  let readAgain = 0;
  const decoder = new TextDecoder();
  const pumping = (async () => {
    for (;;) {
      const next = await subscription.next();
      if (next.done) return;
      const body = JSON.parse(decoder.decode(next.value.payload)) as { k: string; s: number };
      const position = String(next.value.position);
      if (read.has(position)) readAgain++;
      else read.set(position, { key: body.k, seq: body.s });
      next.value.ack();
    }
  })().catch(() => undefined);
  return {
    /** Every output read, once `expected` distinct ones were or `timeoutMs` ran out, and 1 s more. */
    async read(expected: number, timeoutMs: number): Promise<readonly Handled[]> {
      const deadline = performance.now() + timeoutMs;
      const distinct = () => new Set([...read.values()].map((r) => r.seq)).size;
      while (distinct() < expected && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      // A little longer, so an output committed twice shows up as the duplicate it is.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      if (readAgain > 0) log(`[chaos] the outputs' reader read ${readAgain} records again`);
      return [...read.values()];
    },
    async close(): Promise<void> {
      await broker.shutdown();
      await pumping;
    },
  };
}

/** Deletes the run's topics, so runs do not pile partitions onto the cluster's small heaps. */
async function deleteTopics(bootstrap: string, topics: readonly string[]): Promise<void> {
  const admin = kafkaJavascript.AdminClient.create({ "metadata.broker.list": bootstrap });
  try {
    for (const topic of topics) {
      await new Promise<void>((resolve) => admin.deleteTopic(topic, 10_000, () => resolve()));
    }
  } finally {
    admin.disconnect();
  }
}

/**
 * Fails unless a client bootstrapped through the proxies is told only the proxies' addresses: a
 * node advertising its direct address there would take the services' traffic past the faults.
 */
async function assertThroughProxy(serviceAddress: string): Promise<void> {
  const producer = new kafkaJavascript.Producer({ "metadata.broker.list": serviceAddress });
  await new Promise<void>((resolve, reject) =>
    producer.connect({ timeout: 10_000 }, (error) => (error ? reject(error) : resolve())),
  );
  try {
    const metadata = await new Promise<kafkaJavascript.Metadata>((resolve, reject) =>
      producer.getMetadata({ timeout: 10_000 }, (error, found) =>
        error ? reject(error) : resolve(found),
      ),
    );
    const through = new Set(serviceAddress.split(","));
    const past = metadata.brokers
      .map((b) => `${b.host}:${b.port}`)
      .filter((address) => !through.has(address));
    if (past.length > 0 || metadata.brokers.length === 0) {
      throw new Error(
        `the cluster's metadata through ${serviceAddress} names ${past.join(", ") || "no node"}: the faults would miss the services' traffic`,
      );
    }
  } finally {
    await new Promise<void>((resolve) => producer.disconnect(() => resolve()));
  }
}
