import { isRustStreamError, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { brokers, requireEnv, uniqueName, within } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { RabbitBroker, RabbitQuorumQueue } from "../../src/index.js";

// On the three-node cluster, a quorum queue replicated on all three: its leader SIGKILLed in the
// middle of the keyed stream an app consumes, then started again. The app is given the three nodes'
// URLs; it declared the queue through the first, so the queue's leader is the node the app is
// connected to (quorum queues lead where they are declared), and the kill takes the app's
// connection with it. Nothing the queue confirmed is lost, and the app goes on by itself on another
// node once another member leads.

const cluster = brokers["rabbitmq-cluster"];
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const total = 3000;
const keys = 16;
/** Publishes in flight at once: the load. */
const window = 32;

interface Job {
  readonly k: string;
  readonly n: number;
}

/** A promise with its resolver, for a condition the handler reaches. */
function signal(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const log = (line: string) => process.stderr.write(`[rabbitmq-cluster] ${line}\n`);

describe("a quorum queue's leader killed mid-stream", () => {
  it("loses nothing confirmed, and the app goes on by itself on another node", () =>
    cluster.exclusive(async () => {
      const urls = requireEnv("RABBITMQ_CLUSTER_URLS").split(",");
      const queue = uniqueName("leader");
      const handled = new Map<number, number>();
      const underWay = signal();
      const all = signal();
      let handledAtKill = -1;
      let killedAt = 0;
      const app = new RustStream({ name: "leader", version: "1.0.0" }).broker(
        new RabbitBroker({
          url: urls,
          declare: true,
          waitForConnectionMs: 120_000,
          reconnect: { initialMs: 100, maxMs: 1000 },
        }),
        (b) => {
          b.subscriber<Job>(new RabbitQuorumQueue(queue, { prefetch: 64 }))
            .workers(4, { key: "partitionKey" })
            .handle(async (job) => {
              handled.set(job.n, (handled.get(job.n) ?? 0) + 1);
              if (handled.size >= total / 10) underWay.resolve();
              if (handled.size === total) all.resolve();
            });
        },
      );
      const t0 = Date.now();
      t = await TestApp.startLive(app, { withinMs: 60_000 });
      log(`app started in ${Date.now() - t0} ms`);

      // The publisher starts from another node, so the kill does not take it too.
      const publishing = await new RabbitBroker({
        url: [...urls.slice(1), urls[0] as string],
        waitForConnectionMs: 120_000,
        reconnect: { initialMs: 100, maxMs: 1000 },
      }).connect();
      let killed: number | undefined;
      let retried = 0;
      try {
        const info = (await cluster.management(1, `/api/queues/%2F/${queue}`)) as {
          leader?: string;
          members?: string[];
        };
        expect(info.members?.length, "a member on each node").toBe(3);
        expect(info.leader, "the leader is where the app declared it").toBe(
          "ruststream-n1@localhost",
        );
        const publisher = await publishing.defaultPublishPolicy().pair(publishing);
        log(`the queue on three nodes, the publisher connected, in ${Date.now() - t0} ms`);
        // Published until the queue confirmed it: one the kill cut off is published again.
        const publish = async (n: number): Promise<void> => {
          const payload = new TextEncoder().encode(JSON.stringify({ k: `k${n % keys}`, n }));
          for (;;) {
            try {
              await publisher.publish({ name: queue, payload, partitionKey: `k${n % keys}` });
              return;
            } catch (error) {
              if (!isRustStreamError(error, "broker-failure")) throw error;
              retried++;
              await new Promise((resolve) => setTimeout(resolve, 100));
            }
          }
        };
        for (let n = 0; n < total; n += window) {
          await Promise.all(
            [...Array(Math.min(window, total - n)).keys()].map((j) => publish(n + j)),
          );
          if (killed === undefined && n + window >= total / 3) {
            log(`a third published in ${Date.now() - t0} ms`);
            await within(60_000, "the app under way", underWay.promise);
            killed = cluster.nodeOf(info.leader as string);
            handledAtKill = handled.size;
            killedAt = Date.now();
            await cluster.killNode(killed);
            log(`node ${killed} (the leader) killed with ${handledAtKill} of ${total} handled`);
          }
        }
        await within(180_000, `all ${total} handled`, all.promise);
        const survivor = killed === 1 ? 2 : 1;
        const after = (await cluster.management(survivor, `/api/queues/%2F/${queue}`)) as {
          leader?: string;
        };
        expect(after.leader && cluster.nodeOf(after.leader)).not.toBe(killed);
        const twice = [...handled.values()].filter((count) => count > 1).length;
        log(
          `all ${total} handled ${Date.now() - killedAt} ms after the kill; ${twice} more than once; ${retried} publishes tried again`,
        );
      } finally {
        try {
          await publishing.shutdown();
        } finally {
          if (killed !== undefined) {
            const begin = Date.now();
            await cluster.startNode(killed);
            log(`node ${killed} back in the cluster in ${Date.now() - begin} ms`);
          }
          const stopping = Date.now();
          await t?.stop();
          t = undefined;
          log(`app stopped in ${Date.now() - stopping} ms`);
          await cluster
            .management(2, `/api/queues/%2F/${queue}`, { method: "DELETE" })
            .catch(() => undefined);
        }
      }
      expect([...handled.keys()].sort((a, b) => a - b)).toEqual([...Array(total).keys()]);
    }));
});
