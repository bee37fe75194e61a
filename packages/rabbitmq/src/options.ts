import {
  type Clock,
  RustStreamError,
  type ServerDescription,
  type TlsOptions,
} from "@ruststream/core";
import { hostFromUrl, nodeTlsSettings, positive, resolveTls } from "@ruststream/core/broker";
import type { AmqpLinkOptions } from "./client/amqpLink.js";
import { loginOf, type RabbitAuthMechanism, vhostOf } from "./login.js";
import type { Topology } from "./topology/topology.js";

// The broker's options, read by the broker (checked when it is built, used to connect) and by its
// connection: in a file of their own, so broker.ts imports connection.ts and nothing imports either
// back. Beside them, what is read from them alone: the defaults, and the server's description.

export interface RabbitBrokerOptions {
  /**
   * `amqp://user:password@host:5672/vhost` (`amqps://` for TLS), or a list of them: the nodes of one
   * cluster. A connection takes the first that answers, in order, and after a loss starts from the
   * node after the one it lost. The vhost is the path's one segment, percent-encoded (`/%2F` is the
   * vhost `/`, the default; `/orders%2Feu` is `orders/eu`). The password is never shown: not in
   * `describeServer()`, logs or docs.
   */
  readonly url: string | readonly string[];
  /** TLS settings (CA, client certificate and key); `amqps://` implies TLS with the system's CAs. */
  readonly tls?: boolean | TlsOptions;
  /**
   * `PLAIN` (the default): the url's user and password. `EXTERNAL`: the TLS client certificate
   * (`tls: { cert, key }`) logs in, as the user the server names from it (its common name or its
   * distinguished name, by the node's `ssl_cert_login_from`); the url then has no user or password.
   * The node needs the rabbitmq_auth_mechanism_ssl plugin and EXTERNAL in its `auth_mechanisms`.
   */
  readonly authMechanism?: RabbitAuthMechanism;
  /**
   * Declare the queues, exchanges and bindings descriptors describe (true), or check that the server
   * has them as described (false, the default): a descriptor's own `declare` wins.
   */
  readonly declare?: boolean;
  /**
   * How long a publish, a subscribe or a declaration waits for a lost connection to come back
   * before it fails naming why it is down (default 10,000 ms).
   */
  readonly waitForConnectionMs?: number;
  /** The reconnect backoff: from `initialMs` (default 100), doubling, up to `maxMs` (5,000). */
  readonly reconnect?: { readonly initialMs?: number; readonly maxMs?: number };
  /** A connection attempt's time limit (default 10,000 ms). */
  readonly connectTimeoutMs?: number;
  /** The largest payload a publish may carry (default 16 MiB; the server's own limit is 128 MiB). */
  readonly maxMessageBytes?: number;
  /** Time for request timeouts (default: real time). */
  readonly clock?: Clock;
  /**
   * Queues and exchanges this service publishes to without reading them (a reply's queue, a
   * dead letter's, an exchange a publish goes to): declared at connect (`declare`, the descriptor's
   * own first), else checked, as subscribing does for what it reads. Without them a reply to a
   * queue nobody declared yet is unroutable, which `mandatory` makes an error.
   */
  readonly topology?: readonly TopologyOf[];
}

/** A descriptor whose topology the broker declares or checks at connect. */
export interface TopologyOf {
  readonly name: string;
  readonly declare?: boolean | undefined;
  topology(): Topology;
}

export const defaultMaxMessageBytes = 16 * 1024 * 1024;

/** The server as configured: scheme and host (the first node's), never the user or password. */
export function describeRabbitServer(options: RabbitBrokerOptions): ServerDescription {
  const [first] = urlList(options);
  return {
    protocol: first?.protocol === "amqps:" ? "amqps" : "amqp",
    host: hostFromUrl(String(first)),
  };
}

/** The URLs as a list, each checked to be an AMQP URL. */
export function urlList(options: RabbitBrokerOptions): URL[] {
  const given: unknown = options?.url;
  const urls = typeof given === "string" ? [given] : Array.isArray(given) ? [...given] : [];
  if (urls.length === 0 || urls.some((u) => typeof u !== "string")) {
    throw new RustStreamError(
      "invalid-argument",
      'RabbitBroker needs a url: new RabbitBroker({ url: "amqp://user:password@127.0.0.1:5672" }), or a list of a cluster\'s nodes',
    );
  }
  return urls.map((text: string) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new RustStreamError(
        "invalid-argument",
        "RabbitBroker's url is not a URL: give amqp://user:password@host:port/vhost",
      );
    }
    if (url.protocol !== "amqp:" && url.protocol !== "amqps:") {
      throw new RustStreamError(
        "invalid-argument",
        `RabbitBroker's url: ${url.protocol}// is not amqp:// or amqps://`,
      );
    }
    if (url.pathname.slice(1).includes("/")) {
      const vhost = url.pathname.slice(1);
      throw new RustStreamError(
        "invalid-argument",
        `RabbitBroker's url: the vhost is the path's one segment, and "${vhost}" has a "/" in it: percent-encode it (/${vhost.replaceAll("/", "%2F")} for the vhost "${vhost}", /%2F for "/")`,
      );
    }
    try {
      vhostOf(url);
      loginOf(url);
    } catch {
      throw new RustStreamError(
        "invalid-argument",
        `RabbitBroker's url: its user, password or vhost is not percent-encoded UTF-8: write each "%" in them as %25`,
      );
    }
    return url;
  });
}

/** The mechanism, checked against the urls and the TLS settings it needs. */
function authMechanism(options: RabbitBrokerOptions, urls: readonly URL[]): RabbitAuthMechanism {
  const mechanism: unknown = options.authMechanism ?? "PLAIN";
  if (mechanism === "PLAIN") return mechanism;
  if (mechanism !== "EXTERNAL") {
    throw new RustStreamError(
      "invalid-argument",
      `RabbitBroker's authMechanism: ${JSON.stringify(mechanism)} is not "PLAIN" (the url's user and password) or "EXTERNAL" (a TLS client certificate)`,
    );
  }
  const tls = typeof options.tls === "object" ? options.tls : undefined;
  if (tls?.cert === undefined || tls.key === undefined) {
    throw new RustStreamError(
      "invalid-argument",
      "RabbitBroker's authMechanism \"EXTERNAL\" logs in with a TLS client certificate: give tls: { cert, key } (and the ca the node's certificate chains to) with an amqps:// url to the node's TLS listener",
    );
  }
  if (urls.some((url) => url.username !== "" || url.password !== "")) {
    throw new RustStreamError(
      "invalid-argument",
      'RabbitBroker\'s authMechanism "EXTERNAL": the node names the user from the client certificate, so a user or password in the url would be ignored; leave them out (amqps://host:5671/vhost)',
    );
  }
  return mechanism;
}

/** Checks the options where the broker is built, so a mistake shows there. */
export function checkOptions(options: RabbitBrokerOptions): void {
  urlList(options);
  linkOptions(options);
  const topology: unknown = options.topology;
  if (
    topology !== undefined &&
    (!Array.isArray(topology) ||
      !topology.every((item) => typeof (item as Partial<TopologyOf>)?.topology === "function"))
  ) {
    throw new RustStreamError(
      "invalid-argument",
      "RabbitBroker's topology: give a list of RabbitQueue, RabbitQuorumQueue, RabbitStream or RabbitExchange",
    );
  }
}

/** What the link to the server is opened with. */
export function linkOptions(options: RabbitBrokerOptions): AmqpLinkOptions {
  const urls = urlList(options);
  const tls = resolveTls(
    "RabbitBroker's tls",
    options.tls,
    urls.some((url) => url.protocol === "amqps:"),
  );
  for (const url of urls)
    if (tls !== undefined && url.protocol === "amqp:") url.protocol = "amqps:";
  const initialMs = positive("reconnect.initialMs", options.reconnect?.initialMs, 100);
  return {
    urls: urls.map(String),
    authMechanism: authMechanism(options, urls),
    socket: {
      timeout: positive("connectTimeoutMs", options.connectTimeoutMs, 10_000),
      ...(tls === undefined ? {} : nodeTlsSettings(tls)),
    },
    waitForConnectionMs: positive("waitForConnectionMs", options.waitForConnectionMs, 10_000),
    reconnect: {
      initialMs,
      maxMs: Math.max(initialMs, positive("reconnect.maxMs", options.reconnect?.maxMs, 5000)),
    },
    where: urls.map((url) => url.host).join(","),
  };
}
