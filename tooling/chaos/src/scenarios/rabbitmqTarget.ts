// A quorum queue declared by the services (with the cap and dead letter of a retry plan); the load
// is published straight to the broker through the default exchange. On the one RabbitMQ node of
// tooling/brokers, which the services reach through the fault proxy; that node is shared: no
// scenario restarts it. Or, with `cluster`, on the three-node cluster, which the scenario has to
// itself: the services and the load are given all three nodes' URLs (the services declare the
// queue through the first, so it leads there), and the cluster's own faults are the node leading
// the queue SIGKILLed, held down, and started again, and all three nodes SIGKILLed at once and
// started again.
import { RabbitBroker, RabbitPublish } from "@ruststream/rabbitmq";
import { brokers, ensureBrokers, requireEnv } from "@ruststream/tooling-testkit";
import type { PlannedFault } from "../faults/schedule.js";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { publishLoad } from "../load.js";
import type { FaultKind } from "./scenario.js";
import type { Target } from "./target.js";

const cluster = brokers["rabbitmq-cluster"];

export async function rabbitmqTarget(
  key: string,
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  onCluster: boolean,
  log: (line: string) => void,
): Promise<Target> {
  await ensureBrokers([onCluster ? "rabbitmq-cluster" : "rabbitmq"], log);
  const direct = onCluster
    ? requireEnv("RABBITMQ_CLUSTER_URLS").split(",")
    : [requireEnv("RABBITMQ_URL")];
  const url = new URL(direct[0] as string);
  if (proxy !== undefined) {
    if (onCluster) throw new Error("rabbitmqTarget: no fault proxy in front of the cluster");
    const port = await proxy.toxiproxy.proxy(proxy.name, `${url.hostname}:${url.port}`);
    url.hostname = "127.0.0.1";
    url.port = String(port);
  }
  const management = (path: string, init?: RequestInit) =>
    onCluster ? cluster.management(2, path, init) : brokers.rabbitmq.management(path, init);
  const deleteQueue = (queue: string) =>
    management(`/api/queues/%2F/${encodeURIComponent(queue)}`, { method: "DELETE" });
  // The queues the services declared beside the main one, all named after it: a retry plan's dead
  // letter and the package's wait queues (one per delay: the plan's, and a thrown error's backoffs
  // where the runtime keeps the cap).
  const besides = async (): Promise<string[]> => {
    const queues = (await management("/api/queues/%2F?columns=name")) as { name: string }[];
    return queues.map((q) => q.name).filter((name) => name.startsWith(`${key}.`));
  };
  return {
    // The service splits a list of nodes at its commas.
    serviceAddress: onCluster ? direct.join(",") : url.toString(),
    publishBeforeStart: false,
    async publishAll(messages, windowMs, paceLog) {
      const broker = await new RabbitBroker({ url: direct }).connect();
      const publisher = await new RabbitPublish().pair(broker);
      await publishLoad(broker, publisher, key, messages, windowMs, paceLog);
    },
    // All three nodes SIGKILLed at once and started again on their data: the whole cluster's crash.
    restartBroker: onCluster ? () => cluster.restartAll() : undefined,
    ...(onCluster
      ? { ownFaults: { "leader-kill": (fault, { hold }) => killLeader(key, fault, hold, log) } }
      : {}),
    async cleanup() {
      const others = await besides().catch((error: unknown) => {
        log(`[chaos] listing the queues beside ${key}: ${String(error)}`);
        return [];
      });
      for (const queue of [key, ...others]) {
        await deleteQueue(queue).catch((error: unknown) =>
          log(`[chaos] deleting queue ${queue}: ${String(error)}`),
        );
      }
    },
  };
}

/**
 * Kills the node leading the queue (as a live node's management API names it), holds it down,
 * starts it again; resolves once all three run as one cluster. It waits first until the queue has a
 * leader and all three members online, so each such fault takes one node of three, never a second
 * one while the first is still rejoining.
 */
async function killLeader(
  queue: string,
  _fault: PlannedFault<FaultKind>,
  hold: () => Promise<void>,
  log: (line: string) => void,
): Promise<{ target: string; landedAt: number }> {
  const deadline = Date.now() + 60_000;
  let leader: string | undefined;
  for (;;) {
    const info = await queueInfo(queue);
    if (info?.leader !== undefined && info.online?.length === 3) {
      leader = info.leader;
      break;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `leader-kill: queue ${queue} not led with three members online: ${JSON.stringify(info)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const node = cluster.nodeOf(leader);
  const landedAt = performance.now();
  await cluster.killNode(node);
  log(`[chaos] leader-kill: node ${node} (leader of queue ${queue}) killed`);
  await hold();
  await cluster.startNode(node);
  return { target: `node ${node} (the queue's leader)`, landedAt };
}

/** The queue as the first node that answers describes it (a node may be down meanwhile). */
async function queueInfo(
  queue: string,
): Promise<{ leader?: string; online?: string[] } | undefined> {
  for (const i of [1, 2, 3]) {
    const info = await cluster
      .management(i, `/api/queues/%2F/${encodeURIComponent(queue)}`)
      .catch(() => undefined);
    if (info !== undefined) return info as { leader?: string; online?: string[] };
  }
  return undefined;
}
