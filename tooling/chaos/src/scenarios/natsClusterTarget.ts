// The three-node NATS cluster of tooling/brokers (JetStream on every node), never the single
// server others test on. The runner makes the stream, replicated on all three nodes (file storage)
// and partitioned by key (natsPartitions.ts); its durable consumers, one per partition, replicated
// with it, are made by the services at their start, both replicas at once, as a service's first
// deployment does (a start that once failed on them: README, Found so far). The load goes out
// straight to the cluster, in order per key and
// each message under its sequence number as `Nats-Msg-Id`, so a publish sent again after a leader's
// death is stored once. The cluster's own fault: the node leading the stream or one of its
// consumers SIGKILLed and started again.
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { NatsBroker, NatsPublish } from "@ruststream/nats";
import { brokers } from "@ruststream/tooling-testkit";
import type { PlannedFault } from "../faults/schedule.js";
import { bodyOf } from "../load.js";
import { publishInOrder } from "../orderedPublish.js";
import {
  keySubject,
  partitionDurable,
  partitions,
  partitionTransform,
} from "../service/natsPartitions.js";
import type { FaultKind } from "./scenario.js";
import type { Target } from "./target.js";

const cluster = brokers["nats-cluster"];
const REPLICAS = 3;
/** How long the stream and its consumers may take to be led and whole again before a kill. */
const IN_SYNC_TIMEOUT_MS = 60_000;

export async function natsClusterTarget(
  key: string,
  group: string,
  log: (line: string) => void,
): Promise<Target> {
  await cluster.up(log);
  const servers = cluster.bootstrap();
  // The runner's own connection for the stream and the leaders' lookups: it moves between nodes
  // as they die, and never gives up.
  const nc = await connect({
    servers: servers.split(","),
    reconnectTimeWait: 250,
    maxReconnectAttempts: -1,
  });
  const jsm = await jetstreamManager(nc, { timeout: 5_000 });
  await jsm.streams.add({
    name: key,
    subjects: [`${key}.*`],
    subject_transform: partitionTransform(key),
    storage: "file",
    num_replicas: REPLICAS,
  });
  const led = ledBy(jsm, key, group);
  // The stream alone: its consumers are the services' to make. A leader's kill waits for them all.
  await inSync(led.slice(0, 1));
  return {
    serviceAddress: servers,
    publishBeforeStart: false,
    async publishAll(messages, windowMs, paceLog) {
      const broker = await new NatsBroker({
        servers: servers.split(","),
        reconnectWaitMs: 250,
      }).connect();
      const publisher = await new NatsPublish({ jetStream: true }).pair(broker);
      try {
        await publishInOrder(
          messages,
          async (message) => {
            await publisher.publish({
              name: keySubject(key, message.key),
              payload: bodyOf(message),
              partitionKey: message.key,
              options: { msgId: String(message.seq) },
            });
          },
          windowMs,
          paceLog,
        );
      } finally {
        await broker.shutdown();
      }
    },
    restartBroker: undefined,
    ownFaults: {
      "leader-kill": (fault, { hold }) => killLeader(led, fault, hold, log),
    },
    async cleanup() {
      try {
        await jsm.streams.delete(key);
      } catch (error) {
        log(`[chaos] ${key}: the stream not deleted: ${String(error)}`);
      } finally {
        await nc.close();
      }
    },
  };
}

/** The stream and its consumers: each a Raft group of its own, with a leader of its own. */
interface Led {
  readonly what: string;
  readonly info: () => Promise<{ cluster?: ClusterInfo }>;
}
interface ClusterInfo {
  readonly leader?: string;
  readonly replicas?: readonly { readonly current: boolean }[];
}

/** The stream first, then each partition's consumer. */
function ledBy(jsm: JetStreamManager, key: string, group: string): Led[] {
  return [
    { what: "the stream", info: () => jsm.streams.info(key) },
    ...partitions().map((p) => ({
      what: `consumer ${partitionDurable(group, p)}`,
      info: () => jsm.consumers.info(key, partitionDurable(group, p)),
    })),
  ];
}

/**
 * Kills the node leading the stream or one of its consumers, holds it down, starts it again. The
 * seed decides which, by the fault's planned moment: the stream's leader half the time (the
 * publishes' way in), else a consumer's (by the moment modulo the partitions). It waits first until
 * each of them is led and both its followers are current, so each such fault takes one node of
 * three, never a second one while the first is still catching up.
 */
async function killLeader(
  led: readonly Led[],
  fault: PlannedFault<FaultKind>,
  hold: () => Promise<void>,
  log: (line: string) => void,
): Promise<{ target: string; landedAt: number }> {
  const leaders = await inSync(led);
  const chosen = fault.atMs % 2 === 0 ? 0 : 1 + (Math.floor(fault.atMs / 2) % (led.length - 1));
  const node = cluster.nodeOf(leaders[chosen] as string);
  const what = led[chosen]?.what as string;
  const landedAt = performance.now();
  await cluster.killNode(node);
  log(`[chaos] leader-kill: node ${node} (leader of ${what}) killed`);
  await hold();
  await cluster.startNode(node);
  return { target: `node ${node} (leader of ${what})`, landedAt };
}

/** Each one's leader, once every one is led with all its replicas current. */
async function inSync(led: readonly Led[]): Promise<string[]> {
  const deadline = performance.now() + IN_SYNC_TIMEOUT_MS;
  for (;;) {
    const states = await Promise.all(led.map(stateOf));
    const leaders = states.flatMap((s) => (s.leader === undefined ? [] : [s.leader]));
    if (leaders.length === led.length) return leaders;
    if (performance.now() > deadline) {
      const waiting = states.flatMap((s) => (s.waiting === undefined ? [] : [s.waiting]));
      throw new Error(
        `${led.map((l) => l.what).join(", ")}: not led and in sync in ${IN_SYNC_TIMEOUT_MS / 1000} s: ${waiting.join("; ")}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Its leader when it is led and whole, else what it waits for. */
async function stateOf({ what, info }: Led): Promise<{ leader?: string; waiting?: string }> {
  try {
    const { leader, replicas = [] } = (await info()).cluster ?? {};
    const current = replicas.filter((r) => r.current).length;
    if (leader !== undefined && leader !== "" && current === REPLICAS - 1) return { leader };
    return { waiting: `${what}: leader ${leader || "none"}, ${current} followers current` };
  } catch (error) {
    return { waiting: `${what}: ${String(error)}` };
  }
}
