import { RustStreamError, type ServerDescription, type TlsOptions } from "@ruststream/core";
import { hostFromUrl, positive, resolveTls } from "@ruststream/core/broker";
import type { NatsPublishSettings } from "./publisher.js";

// The broker's options, read by the broker (checked when it is built, used to connect) and by its
// connection: in a file of their own, so broker.ts imports connection.ts and nothing imports either
// back. Beside them, what is read from them alone: the defaults, and the server's description.

/** How the client proves who it is. One at most; none for a server without authentication. */
export type NatsCredentials =
  | { readonly user: string; readonly password: string }
  | { readonly token: string }
  /** An NKey user: the seed (`SU...`) signs the server's nonce; it never leaves the process. */
  | { readonly nkeySeed: string }
  /**
   * A JWT user (operator mode): the credentials file's text (its JWT and seed, as `nsc` writes it),
   * never a path, so the package reads no file of its own.
   */
  | { readonly creds: string | Uint8Array };

export interface NatsBrokerOptions {
  /**
   * One server or several, `nats://host:port` (`tls://` asks for TLS), the client's seed list; or
   * websocket servers, `ws://host:port` (`wss://` over TLS), never mixed with the others.
   */
  readonly servers: string | readonly string[];
  /** Never shown: not in `describeServer()`, logs or docs. */
  readonly credentials?: NatsCredentials;
  /**
   * TLS: `true` trusts the system's CAs; the settings add a CA, a client certificate, a name. Over
   * websockets only `true` (or nothing: `wss://` asks for it): Node's WebSocket takes no settings.
   */
  readonly tls?: boolean | TlsOptions;
  /** The connection's name, as the server's monitoring shows it (default: the app's name). */
  readonly name?: string;
  /**
   * How often the client tries to reconnect after losing the server before the connection is
   * `lost` (default: without end, `-1`, as a service wants).
   */
  readonly maxReconnectAttempts?: number;
  /** The wait between two reconnect attempts to one server (default 2000 ms, the client's). */
  readonly reconnectWaitMs?: number;
  /** How long a JetStream API call (a stream's lookup, a consumer's creation) may take (default 5000 ms). */
  readonly apiTimeoutMs?: number;
  /**
   * How long a JetStream API call's transient failures are tried again at a subscription's start
   * (default 30000 ms): a timeout, a group with no leader yet (10008), nobody answering on a node
   * still starting JetStream, a consumer not found right after its creation. Anything else fails
   * at once.
   */
  readonly apiRetryWithinMs?: number;
  /**
   * How the app publishes (its replies, `ctx.out`, retry copies, dead letters): core NATS by
   * default; `{ jetStream: true }` publishes to JetStream, each publish resolving on the stream's
   * acknowledgement (a subject no stream stores then fails), and sends no requests.
   */
  readonly publish?: NatsPublishSettings;
}

/** The servers as a list, each checked to be a URL this client reads. */
export function serverList(options: NatsBrokerOptions): string[] {
  const servers = typeof options.servers === "string" ? [options.servers] : [...options.servers];
  if (servers.length === 0 || servers.some((s) => typeof s !== "string" || s === "")) {
    throw new RustStreamError(
      "invalid-argument",
      'NatsBroker needs servers: new NatsBroker({ servers: "nats://127.0.0.1:4222" }) or a list of them',
    );
  }
  for (const server of servers) {
    let url: URL;
    try {
      url = new URL(server.includes("://") ? server : `nats://${server}`);
    } catch {
      throw new RustStreamError(
        "invalid-argument",
        `NatsBroker: "${server}" is not a server address: give nats://host:port (or tls://, ws://, wss://)`,
      );
    }
    if (![...TCP_SCHEMES, ...WS_SCHEMES].includes(url.protocol)) {
      throw new RustStreamError(
        "invalid-argument",
        `NatsBroker: "${url.protocol}" is not a NATS scheme: give nats://host:port (or tls://host:port), or a websocket's ws://host:port (or wss://host:port)`,
      );
    }
    if (url.username !== "" || url.password !== "") {
      throw new RustStreamError(
        "invalid-argument",
        "NatsBroker: put the user and password in credentials, not in the server's URL, so no description or log shows them",
      );
    }
  }
  const websockets = servers.filter(isWebsocketUrl);
  if (websockets.length > 0 && websockets.length < servers.length) {
    throw new RustStreamError(
      "invalid-argument",
      `NatsBroker servers: ${websockets.join(", ")} and ${servers.filter((s) => !isWebsocketUrl(s)).join(", ")} mix websocket and TCP servers; the client connects over one transport: give only ws:// and wss:// servers, or only nats:// and tls:// ones`,
    );
  }
  return servers;
}

const TCP_SCHEMES = ["nats:", "tls:"];
const WS_SCHEMES = ["ws:", "wss:"];

function isWebsocketUrl(server: string): boolean {
  return WS_SCHEMES.some((scheme) => server.toLowerCase().startsWith(`${scheme}//`));
}

/** Whether the servers are websocket ones (`ws://`, `wss://`): a list is all of one kind. */
export function isWebsocket(options: NatsBrokerOptions): boolean {
  return serverList(options).some(isWebsocketUrl);
}

/**
 * The tls option against websocket servers: Node's WebSocket, the client's websocket transport,
 * takes no TLS settings (no CA, client certificate or server name), so only `true` with `wss://`
 * is something it can do; the rest is refused rather than ignored.
 */
function checkWebsocketTls(options: NatsBrokerOptions): void {
  const servers = serverList(options);
  const tls = options.tls;
  if (typeof tls === "object" && tls !== null) {
    throw new RustStreamError(
      "invalid-argument",
      "NatsBroker tls: websocket servers take no TLS settings (Node's WebSocket, which the NATS client's websocket transport uses, has no CA, certificate or server name option): give tls: true or leave it out with wss:// (the system's CAs check the server; NODE_EXTRA_CA_CERTS adds a CA to them for the process), or connect over tls:// to give the settings",
    );
  }
  const plain = servers.filter((s) => s.toLowerCase().startsWith("ws://"));
  if (tls === true && plain.length > 0) {
    throw new RustStreamError(
      "invalid-argument",
      `NatsBroker tls: true asks for TLS, but ${plain.join(", ")} is a websocket without it: give wss://host:port`,
    );
  }
  if (tls === false && plain.length < servers.length) {
    throw new RustStreamError(
      "invalid-argument",
      "NatsBroker tls: false, but a wss:// server is a websocket over TLS: give ws://host:port, or leave tls out",
    );
  }
}

/** Checks every option once, when the broker is built: a mistake is an error before any I/O. */
export function checkOptions(options: NatsBrokerOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new RustStreamError(
      "invalid-argument",
      'NatsBroker needs options: new NatsBroker({ servers: "nats://127.0.0.1:4222" })',
    );
  }
  serverList(options);
  credentialsOf(options);
  if (isWebsocket(options)) checkWebsocketTls(options);
  else resolveTls("NatsBroker tls", options.tls);
  if (
    options.maxReconnectAttempts !== undefined &&
    options.maxReconnectAttempts !== -1 &&
    !(Number.isSafeInteger(options.maxReconnectAttempts) && options.maxReconnectAttempts >= 0)
  ) {
    throw new RustStreamError(
      "invalid-argument",
      `NatsBroker maxReconnectAttempts: give a whole number of 0 or more, or -1 for without end, not ${String(options.maxReconnectAttempts)}`,
    );
  }
  positive("reconnectWaitMs", options.reconnectWaitMs, 2000);
  positive("apiTimeoutMs", options.apiTimeoutMs, 5000);
  positive("apiRetryWithinMs", options.apiRetryWithinMs, 30_000);
}

/** The credentials, checked: one kind, each field text. */
export function credentialsOf(options: NatsBrokerOptions): NatsCredentials | undefined {
  const c = options.credentials;
  if (c === undefined) return undefined;
  const kinds = ["password", "token", "nkeySeed", "creds"].filter(
    (k) => typeof c === "object" && c !== null && k in c,
  );
  const fields = (c ?? {}) as Record<string, unknown>;
  const text = (k: string) => typeof fields[k] === "string" && fields[k] !== "";
  const ok =
    kinds.length === 1 &&
    (kinds[0] === "password"
      ? text("user") && text("password")
      : kinds[0] === "creds"
        ? text("creds") || fields.creds instanceof Uint8Array
        : text(kinds[0] as string));
  if (!ok) {
    throw new RustStreamError(
      "invalid-argument",
      "NatsBroker credentials: give one of { user, password }, { token }, { nkeySeed } or { creds } (a credentials file's text), each field non-empty text",
    );
  }
  return c;
}

/** The server as configured, before or after connecting: never a credential. */
export function describeNatsServer(options: NatsBrokerOptions): ServerDescription {
  const [first] = serverList(options);
  const url = (first as string).includes("://") ? (first as string) : `nats://${first}`;
  return { protocol: "nats", host: hostFromUrl(url) };
}
