import { nodeTlsSettings } from "@ruststream/core/broker";
import { Cluster, Redis } from "ioredis";
import {
  connectionError,
  type RedisAddress,
  type ResolvedCluster,
  type ResolvedConnection,
  type ResolvedSentinel,
  type ResolvedServer,
} from "./connectionOptions.js";
import type { Arg, Reply } from "./resp.js";

// The ioredis clients of the three deployments, built from the resolved settings: a connection to
// one server, or to the master the sentinels name (followed through failovers), a cluster client
// (which routes every command to the node serving its key's slot), and a plain connection to one
// node of a cluster (a blocking reader's or a sharded subscriber's, which the cluster client cannot
// hold). The first connection fails with an error that says what to change; after it, connections
// come back for as long as the broker lives.

/** Reconnect for as long as the broker lives: a restarted server is reached again within 2 s. */
const retryStrategy = (times: number): number => Math.min(times * 100, 2000);

/**
 * What every connection to a data node shares, whatever the deployment. Built with each optional key
 * present only when set: ioredis' option types carry plain optional properties that an object with
 * `undefined` values would not satisfy.
 */
function dataNodeOptions(settings: ResolvedConnection, role: string) {
  return {
    ...(settings.username === undefined ? {} : { username: settings.username }),
    ...(settings.password === undefined ? {} : { password: settings.password }),
    ...(settings.tls === undefined ? {} : { tls: nodeTlsSettings(settings.tls) }),
    // RESP2: the replies this package parses have one shape (ioredis 6 defaults to RESP3).
    protocol: 2 as const,
    lazyConnect: true,
    connectTimeout: settings.connectTimeoutMs,
    connectionName: `ruststream-${role}`,
    // Off: ioredis 6's auto-pipelining loses the command name of callBuffer (it reads the first
    // argument as the name). The main connection coalesces one tick's writes itself (IoredisLink).
    enableAutoPipelining: false,
  };
}

/** A master demoted to a replica answers writes with READONLY: reconnect (to the new master) and resend. */
const afterDemotion = (error: Error): 2 | false => (/^READONLY/.test(error.message) ? 2 : false);

/** A connection to one server, or to the master behind Sentinel. */
export function serverClient(settings: ResolvedServer | ResolvedSentinel, role: string): Redis {
  const common = {
    ...dataNodeOptions(settings, role),
    db: settings.db,
    // Commands wait for a reconnect instead of failing after a few retries; shutdown rejects them.
    maxRetriesPerRequest: null,
    retryStrategy,
  };
  if (settings.kind === "server") {
    return new Redis({ ...common, host: settings.host, port: settings.port });
  }
  return new Redis({
    ...common,
    sentinels: settings.sentinels.map(({ host, port }) => ({ host, port })),
    name: settings.name,
    role: "master",
    ...(settings.sentinelUsername === undefined
      ? {}
      : { sentinelUsername: settings.sentinelUsername }),
    ...(settings.sentinelPassword === undefined
      ? {}
      : { sentinelPassword: settings.sentinelPassword }),
    ...(settings.sentinelTls === undefined
      ? {}
      : { sentinelTLS: nodeTlsSettings(settings.sentinelTls) }),
    // The master's TLS is `tls`; ioredis applies it behind Sentinel only when told to.
    enableTLSForSentinelMode: settings.tls !== undefined,
    sentinelRetryStrategy: retryStrategy,
    // After a failover the old master may come back as a replica while this connection still
    // reaches it: its READONLY answer sends the connection back to the sentinels.
    reconnectOnError: afterDemotion,
  });
}

/**
 * The cluster client: it learns the slots from a seed, sends each command to the master serving its
 * key, follows MOVED and ASK, and waits out a failover (a connection lost or CLUSTERDOWN is retried
 * every 200 ms, up to 300 times: about a minute) instead of failing the command at once.
 */
export function clusterClient(settings: ResolvedCluster): Cluster {
  const { lazyConnect: _, ...redisOptions } = dataNodeOptions(settings, "main");
  return new Cluster(
    settings.nodes.map(({ host, port }) => ({ host, port })),
    {
      redisOptions: { ...redisOptions, maxRetriesPerRequest: null },
      lazyConnect: true,
      scaleReads: "master",
      clusterRetryStrategy: retryStrategy,
      maxRedirections: 300,
      retryDelayOnFailover: 200,
      retryDelayOnClusterDown: 200,
      retryDelayOnTryAgain: 100,
      slotsRefreshTimeout: 2000,
      enableAutoPipelining: false,
    },
  );
}

/**
 * A plain connection to one node of a cluster, for a reader that goes where its slot is
 * (SlotConnection): it never reconnects by itself, since after a failover the node it was on may
 * serve the slot no more; its owner opens the next one where the slot is then.
 */
export function nodeClient(settings: ResolvedCluster, address: RedisAddress, role: string): Redis {
  return new Redis({
    ...dataNodeOptions(settings, role),
    host: address.host,
    port: address.port,
    retryStrategy: () => null,
    maxRetriesPerRequest: null,
  });
}

/**
 * Connects `client` and resolves once it is ready, or rejects with the first error the server, the
 * socket or the sentinels gave (a sentinel that knows no such master complains on its own event,
 * which is kept for the message). The client is closed on failure.
 */
export async function ready(client: Redis): Promise<void> {
  const sentinelErrors: string[] = [];
  const onSentinelError = (error: Error) => sentinelErrors.push(error.message);
  client.on("sentinelError", onSentinelError);
  try {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: unknown) => {
        client.off("ready", onReady);
        reject(error);
      };
      const onReady = () => {
        client.off("error", onError);
        resolve();
      };
      client.once("error", onError);
      client.once("ready", onReady);
      client.connect().catch(onError);
    });
  } catch (error) {
    client.disconnect();
    const last = sentinelErrors.at(-1);
    if (last !== undefined && error instanceof Error && !error.message.includes(last)) {
      throw Object.assign(new Error(`${error.message} ${last}`), { cause: error });
    }
    throw error;
  } finally {
    client.off("sentinelError", onSentinelError);
  }
  // Later errors are reconnects in progress; the commands waiting on them report what matters.
  client.on("error", () => {});
}

/** Opens a connection to one server or to the master behind Sentinel, or fails explained. */
export async function openServer(
  settings: ResolvedServer | ResolvedSentinel,
  role: string,
): Promise<Redis> {
  const client = serverClient(settings, role);
  try {
    await ready(client);
  } catch (error) {
    throw connectionError(settings, error);
  }
  return client;
}

/**
 * Reaches one seed node with a plain connection, or fails with what the first seed said. The cluster
 * client learns the slots on connections whose errors it keeps to itself, and reports a refused
 * socket or an untrusted certificate only as "Connection is closed."; a plain connection says which.
 */
async function reachSeed(settings: ResolvedCluster): Promise<void> {
  const attempts = await Promise.allSettled(
    settings.nodes.map(async (seed) => {
      const client = nodeClient(settings, seed, "probe");
      await ready(client);
      client.disconnect();
    }),
  );
  if (attempts.some((a) => a.status === "fulfilled")) return;
  throw connectionError(settings, (attempts[0] as PromiseRejectedResult).reason);
}

/**
 * Opens the cluster client and waits until it knows the slots and the cluster says it is ok, or
 * fails explained: with what a node answered (a refused password, nothing listening), which the
 * client reports on its own event while its `connect` only says that no node was available.
 */
export async function openCluster(settings: ResolvedCluster): Promise<Cluster> {
  await reachSeed(settings);
  const cluster = clusterClient(settings);
  let lastNodeError: unknown;
  const onNodeError = (error: unknown) => {
    lastNodeError = error;
  };
  cluster.on("node error", onNodeError);
  cluster.on("error", () => {});
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      cluster.connect(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `timed out: the cluster was not ready within ${settings.connectTimeoutMs} ms (is every slot served?)`,
              ),
            ),
          settings.connectTimeoutMs,
        );
      }),
    ]);
  } catch (error) {
    cluster.disconnect();
    throw connectionError(settings, lastNodeError ?? error);
  } finally {
    clearTimeout(timer);
    cluster.off("node error", onNodeError);
  }
  return cluster;
}

/** Closes a client politely, bounded: after a second it is cut. */
export async function quit(client: Redis | Cluster): Promise<void> {
  if (client.status === "end") return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.quit().catch(() => undefined),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 1000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/** The arguments as ioredis types them: our bytes are Buffers at run time (see RedisBytes). */
export const wire = (args: readonly Arg[]): (string | Buffer | number)[] =>
  args as (string | Buffer | number)[];

/** One command, its bulk replies as bytes. */
export function call(client: Redis | Cluster, name: string, args: readonly Arg[]): Promise<Reply> {
  return client.callBuffer(name, wire(args)) as Promise<Reply>;
}

/** What ioredis rejects a command with when its connection closed under it. */
export function connectionLost(error: unknown): boolean {
  return error instanceof Error && /^Connection is closed/.test(error.message);
}
