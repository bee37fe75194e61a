// Broker addresses: `pulsar://host:port` (plain, default port 6650) or `pulsar+ssl://host:port`
// (TLS, default port 6651). A service URL may list several hosts, `pulsar://a:6650,b:6650`; any of
// them answers lookups.
import { RustStreamError } from "@ruststream/core";

export interface BrokerAddress {
  readonly tls: boolean;
  readonly host: string;
  readonly port: number;
  /** The address as a URL, `pulsar://host:port`: the key a connection is pooled under. */
  readonly url: string;
}

/** Parses a service URL into its addresses. Throws `invalid-argument`. */
export function parseServiceUrl(serviceUrl: string): BrokerAddress[] {
  const match = /^(pulsar|pulsar\+ssl):\/\/([^/]+?)\/?$/.exec(serviceUrl.trim());
  if (!match)
    throw new RustStreamError(
      "invalid-argument",
      `invalid Pulsar service URL ${JSON.stringify(serviceUrl)}; write pulsar://host:6650 or pulsar+ssl://host:6651`,
    );
  const tls = match[1] === "pulsar+ssl";
  return match[2]!.split(",").map((hostPort) => {
    const at = hostPort.lastIndexOf(":");
    const bracketed = hostPort.startsWith("[");
    const hasPort = at > 0 && (!bracketed || hostPort.lastIndexOf("]") < at);
    const host = (hasPort ? hostPort.slice(0, at) : hostPort).replace(/^\[(.*)\]$/, "$1");
    const port = hasPort ? Number(hostPort.slice(at + 1)) : tls ? 6651 : 6650;
    if (host === "" || !Number.isInteger(port) || port <= 0 || port > 65535)
      throw new RustStreamError(
        "invalid-argument",
        `invalid host:port ${JSON.stringify(hostPort)} in Pulsar service URL ${JSON.stringify(serviceUrl)}`,
      );
    const shown = host.includes(":") ? `[${host}]` : host;
    return { tls, host, port, url: `${tls ? "pulsar+ssl" : "pulsar"}://${shown}:${port}` };
  });
}

/** Parses a single broker URL, as lookups return them. */
export function parseBrokerUrl(url: string): BrokerAddress {
  const [first, ...more] = parseServiceUrl(url);
  if (first === undefined || more.length > 0)
    throw new RustStreamError(
      "invalid-argument",
      `expected one broker address, got ${JSON.stringify(url)}`,
    );
  return first;
}
