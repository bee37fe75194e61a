import { brokers, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { RedisList, RedisPublish, RedisStream } from "../../src/index.js";
import { eventually } from "../appSupport.js";
import { clusterOptions, inspectCluster, sentinelOptions } from "./env.js";
import { underDisruption } from "./failoverScenario.js";

// A master killed with SIGKILL mid-stream, on the cluster and under Sentinel: the deployment promotes
// the replica by itself, and the service (an app reading a stream through a consumer group while
// another client publishes) follows it without a restart. Nothing is lost; what the kill cut (a
// blocked read whose reply was swallowed, an ack not yet replicated) comes back at least once. Each
// test logs the deployment's failover time and the service's pause, and brings the killed node back
// (it rejoins as a replica) for the next test.

const cluster = brokers["redis-cluster"];
const sentinel = brokers["redis-sentinel"];
const log = (line: string) => process.stderr.write(`${line}\n`);

describe("a master killed mid-stream", () => {
  it(
    "on the cluster: the replica takes over the slot, the service goes on by itself, nothing lost",
    () =>
      cluster.exclusive(async () => {
        const key = uniqueName("cluster-failover");
        let victim = 0;
        let failoverMs = 0;
        const report = await underDisruption({
          label: "cluster failover",
          options: clusterOptions,
          source: new RedisStream(key, { blockMs: 500 }),
          group: `${key}.service`,
          publisherOf: (producer) => producer.defaultPublishPolicy().pair(producer),
          disrupt: async () => {
            victim = await cluster.masterOf(key);
            await cluster.killNode(victim);
            failoverMs = await cluster.waitServedWithout(victim);
            log(
              `[cluster failover] node ${victim} killed; every slot served again after ${failoverMs} ms`,
            );
          },
        });
        // Another master serves the stream now, and the service's pause is of the failover's order.
        expect(await cluster.masterOf(key)).not.toBe(victim);
        expect(report.longestGapMs).toBeLessThan(failoverMs + 15_000);
        // The reader on the killed master was cut: the connection said so, then came back.
        expect(report.connection[0]).toMatch(/^reconnecting: /);
        expect(report.connection.at(-1)).toBe("connected");
        await cluster.startNode(victim);
      }),
    240_000,
  );

  it(
    "under Sentinel: the sentinels promote the replica, the service goes on by itself, nothing lost",
    () =>
      sentinel.exclusive(async () => {
        const key = uniqueName("sentinel-failover");
        let victim = 0;
        let failoverMs = 0;
        const report = await underDisruption({
          label: "sentinel failover",
          options: sentinelOptions,
          source: new RedisStream(key, { blockMs: 500 }),
          group: `${key}.service`,
          publisherOf: (producer) => producer.defaultPublishPolicy().pair(producer),
          disrupt: async () => {
            victim = await sentinel.master();
            await sentinel.killData(victim);
            failoverMs = await sentinel.waitFailover(victim);
            log(
              `[sentinel failover] data node ${victim} killed; the sentinels named a new master after ${failoverMs} ms`,
            );
          },
        });
        expect(await sentinel.master()).not.toBe(victim);
        expect(report.longestGapMs).toBeLessThan(failoverMs + 15_000);
        // Every connection followed the master to the new node: reconnecting, then back.
        expect(report.connection[0]).toMatch(/^reconnecting: /);
        expect(report.connection.at(-1)).toBe("connected");
        await sentinel.startData(victim);
      }),
    240_000,
  );

  it(
    "on the cluster, under a reliable list: its scripts run on the new master, nothing lost or left in processing",
    () =>
      cluster.exclusive(async () => {
        const key = uniqueName("cluster-failover-list");
        // Recovery on: a take whose reply the kill swallowed left its values in processing with their
        // claims, and only recovery finds them.
        const source = new RedisList(key, { blockMs: 500, count: 4, recoveryIdleMs: 3000 });
        let victim = 0;
        await underDisruption({
          label: "cluster failover, list",
          options: clusterOptions,
          source,
          group: `${key}.service`,
          publisherOf: (producer) => new RedisPublish({ transport: "list" }).pair(producer),
          disrupt: async () => {
            victim = await cluster.masterOf(key);
            await cluster.killNode(victim);
            const failoverMs = await cluster.waitServedWithout(victim);
            log(
              `[cluster failover, list] node ${victim} killed; every slot served again after ${failoverMs} ms`,
            );
          },
        });
        const keys = source.keys(true);
        const inspector = inspectCluster();
        try {
          await eventually(
            "nothing left in the queue, in processing or claimed",
            async () =>
              (await inspector.llen(keys.queue)) === 0 &&
              (await inspector.llen(keys.processing)) === 0 &&
              (await inspector.zcard(keys.recovery)) === 0,
          );
        } finally {
          inspector.disconnect();
        }
        await cluster.startNode(victim);
      }),
    240_000,
  );
});
