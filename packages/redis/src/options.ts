import type { Clock, ServerDescription } from "@ruststream/core";
import type { RedisConnectionOptions, ResolvedConnection } from "./client/connectionOptions.js";

// The broker's options, read by the broker (checked when it is built, used to connect) and by its
// connection: in a file of their own, so broker.ts imports connection.ts and nothing imports either
// back. Beside them, what is read from them alone: the server's description.

export interface RedisBrokerOptions extends RedisConnectionOptions {
  /**
   * The consumer group of bare names and of stream descriptors that name none, the same in every
   * replica so they share the work. Default: the name of the app that connects the broker (a broker
   * connected by hand, outside an app, has none unless given here).
   */
  readonly group?: string;
  /** The largest payload a publish may carry, refused before sending (default 16 MiB). */
  readonly maxMessageBytes?: number;
  /** Approximate `MAXLEN` for every stream append (publishes, retry copies); no trimming by default. */
  readonly maxLen?: number;
  /** Where request timeouts take time from (the in-process mode uses the test's clock). */
  readonly clock?: Clock;
}

/** The server from its resolved settings, and its version once a connection has read it. */
export function describeRedisServer(
  settings: ResolvedConnection,
  version: string | undefined,
): ServerDescription {
  const protocol = settings.tls === undefined ? "redis" : "rediss";
  const protocolVersion = version === undefined ? {} : { protocolVersion: version };
  if (settings.kind === "server") return { protocol, host: settings.address, ...protocolVersion };
  const [first] = settings.address.split(",");
  return {
    protocol,
    ...(first === undefined ? {} : { host: first }),
    ...protocolVersion,
    description:
      settings.kind === "cluster"
        ? `Redis Cluster, seed nodes ${settings.address.split(",").join(", ")}`
        : `Redis master "${settings.name}" through Sentinel, sentinels ${settings.address.split(",").join(", ")}`,
  };
}
