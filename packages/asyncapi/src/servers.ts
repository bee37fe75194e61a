import type { BrokerDescription } from "@ruststream/core";
import type { Server } from "./document.js";
import { toId, uniqueId } from "./ids.js";

/** The document's servers, and for each broker the key of its server, if it has one. */
export interface DescribedServers {
  readonly servers: Readonly<Record<string, Server>>;
  /** By broker, in the app's order: the server key, or `undefined` for a broker with no host. */
  readonly keys: readonly (string | undefined)[];
}

/**
 * One server per broker that has a network address, named by its kind (`redis`, `kafka_2` for a
 * second Kafka). The broker describes itself without credentials (`describeServer()`), so nothing
 * here ever sees one. AsyncAPI requires a server's host, so a broker with none (the memory broker,
 * a stream file) has no server: its channels name no server, and its operations carry its kind as
 * a tag.
 */
export function describeServers(brokers: readonly BrokerDescription[]): DescribedServers {
  const servers: Record<string, Server> = {};
  const keys = brokers.map((broker) => {
    const server = broker.server;
    if (server?.host === undefined) return undefined;
    const key = uniqueId(toId(broker.kind), (id) => id in servers);
    servers[key] = {
      host: server.host,
      protocol: server.protocol,
      ...(server.protocolVersion === undefined ? {} : { protocolVersion: server.protocolVersion }),
      ...(server.description === undefined ? {} : { description: server.description }),
    };
    return key;
  });
  return { servers, keys };
}
