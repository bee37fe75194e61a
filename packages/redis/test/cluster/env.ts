import { requireEnv } from "@ruststream/tooling-testkit";
import { Cluster, Redis } from "ioredis";
import type { RedisBrokerOptions } from "../../src/index.js";

// The cluster and the Sentinel set, as the redis-cluster project's global setup exported them. A
// missing variable fails the test with the fix (requireEnv) instead of skipping it.

/** The six nodes' addresses, in node order (node i is the i-th). */
export function clusterNodes(): string[] {
  return requireEnv("REDIS_CLUSTER_NODES").split(",");
}

/** A broker's options for the cluster, with the nodes' password. */
export function clusterOptions(): RedisBrokerOptions {
  return {
    cluster: { nodes: clusterNodes() },
    password: requireEnv("REDIS_CLUSTER_PASSWORD"),
  };
}

/** A broker's options for the master behind the sentinels, with its password. */
export function sentinelOptions(): RedisBrokerOptions {
  return {
    sentinel: {
      sentinels: requireEnv("REDIS_SENTINELS").split(","),
      name: requireEnv("REDIS_SENTINEL_NAME"),
    },
    password: requireEnv("REDIS_SENTINEL_PASSWORD"),
  };
}

/** A plain cluster client, for a test to look at what the cluster holds. */
export function inspectCluster(): Cluster {
  const cluster = new Cluster(
    clusterNodes().map((address) => {
      const [host, port] = address.split(":");
      return { host: host ?? "127.0.0.1", port: Number(port) };
    }),
    { redisOptions: { password: requireEnv("REDIS_CLUSTER_PASSWORD"), protocol: 2 } },
  );
  cluster.on("error", () => {});
  return cluster;
}

/** A plain connection to cluster node `i` (1-6), for a test to ask one node. */
export function inspectNode(i: number): Redis {
  const [host, port] = (clusterNodes()[i - 1] ?? "").split(":");
  const node = new Redis({
    host: host ?? "127.0.0.1",
    port: Number(port),
    password: requireEnv("REDIS_CLUSTER_PASSWORD"),
    protocol: 2,
  });
  node.on("error", () => {});
  return node;
}
