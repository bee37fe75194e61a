// Where the Redis consumer benchmark runs: one server, or a Redis Cluster. Every row, the load
// generator and the checks reach it through these, so the rows differ only in the code around the
// commands, wherever they run.
import type { RedisBrokerOptions } from "@ruststream/redis";
import { Cluster, Redis } from "ioredis";

export type Target =
  | { readonly kind: "server"; readonly url: string }
  | {
      readonly kind: "cluster";
      readonly nodes: readonly { readonly host: string; readonly port: number }[];
      readonly password: string | undefined;
    };

export const serverTarget = (url: string): Target => ({ kind: "server", url });

/** The cluster REDIS_CLUSTER_NODES names (tooling/brokers' redis-cluster exports it), if any. */
export function clusterTarget(): Target | undefined {
  const nodes = process.env.REDIS_CLUSTER_NODES;
  if (nodes === undefined || nodes === "") return undefined;
  return {
    kind: "cluster",
    nodes: nodes.split(",").map((address) => {
      const [host = "127.0.0.1", port = "6379"] = address.split(":");
      return { host, port: Number(port) };
    }),
    password: process.env.REDIS_CLUSTER_PASSWORD || undefined,
  };
}

/** The broker's options for the target. */
export function brokerOptions(target: Target): RedisBrokerOptions {
  if (target.kind === "server") return { url: target.url };
  return {
    cluster: { nodes: target.nodes.map((n) => `${n.host}:${n.port}`) },
    ...(target.password === undefined ? {} : { password: target.password }),
  };
}

/** Host and port (the first seed on a cluster), for the results: never a password. */
export function whereOf(target: Target): string {
  if (target.kind === "server") return new URL(target.url).host;
  return `cluster ${target.nodes.map((n) => `${n.host}:${n.port}`).join(",")}`;
}

/**
 * A plain ioredis client of the target, set up as the package sets up its own (RESP2, no
 * auto-pipelining), so the raw loop differs from the package only in the code around the commands.
 * On a cluster it is a cluster client of its own (a blocking read holds its node connections).
 */
export async function openRaw(target: Target, role: string): Promise<Redis | Cluster> {
  const options = { protocol: 2 as const, connectionName: `bench-${role}` };
  if (target.kind === "server") {
    const client = new Redis(target.url, {
      ...options,
      lazyConnect: true,
      maxRetriesPerRequest: null,
    });
    await client.connect();
    return client;
  }
  const cluster = new Cluster(
    target.nodes.map((n) => ({ host: n.host, port: n.port })),
    {
      lazyConnect: true,
      redisOptions: {
        ...options,
        maxRetriesPerRequest: null,
        ...(target.password === undefined ? {} : { password: target.password }),
      },
    },
  );
  await cluster.connect();
  return cluster;
}
