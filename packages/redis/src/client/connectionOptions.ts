import { RustStreamError, type TlsOptions } from "@ruststream/core";
import { type ResolvedTls, resolveTls } from "@ruststream/core/broker";

/** A Redis Cluster: seed nodes, from which the client learns every master and replica. */
export interface RedisClusterOptions {
  /**
   * Seed nodes, `host:port` (a `redis://` or `rediss://` prefix is accepted; `rediss://` turns TLS
   * on). One that answers is enough: the others are learnt from it. Credentials go in the
   * broker's `username` and `password`, which every node is given.
   */
  readonly nodes: readonly string[];
  /**
   * How channels travel: `"sharded"` (`SPUBLISH`/`SSUBSCRIBE`: a channel lives on the node of its
   * hash slot, and only that node carries its messages) or `"classic"` (`PUBLISH`/`SUBSCRIBE`: every
   * message is copied to every node over the cluster bus; patterns need it). Default: sharded when
   * the server has it (Redis 7.0 and later), else classic.
   */
  readonly pubsub?: "sharded" | "classic";
}

/** A master found through Redis Sentinel, and followed through its failovers. */
export interface RedisSentinelOptions {
  /** The sentinels, `host[:port]` (port 26379 when left out). One that answers is enough. */
  readonly sentinels: readonly string[];
  /** The name the sentinels monitor the master under (`sentinel monitor <name> ...`). */
  readonly name: string;
  /** The database number on the master (default 0). */
  readonly db?: number;
  /** The sentinels' own user and password, when they require one (the master's are the broker's). */
  readonly username?: string;
  readonly password?: string;
  /** TLS to the sentinels themselves (the master's TLS is the broker's `tls`). */
  readonly tls?: boolean | TlsOptions;
}

export interface RedisConnectionOptions {
  /**
   * One server: `redis://[user:password@]host[:port][/db]` or `rediss://` for TLS (default
   * `redis://127.0.0.1:6379`). Leave it out for `cluster` or `sentinel`.
   */
  readonly url?: string;
  /** A Redis Cluster instead of one server. */
  readonly cluster?: RedisClusterOptions;
  /** A master behind Redis Sentinel instead of one fixed server. */
  readonly sentinel?: RedisSentinelOptions;
  /** The ACL user (of every node, or of the master behind Sentinel); overrides the URL's. */
  readonly username?: string;
  /** The password (of the ACL user, or of `default`); overrides the URL's. */
  readonly password?: string;
  /** TLS to the data nodes: `true` for the system's CAs, or the settings; `rediss://` implies `true`. */
  readonly tls?: boolean | TlsOptions;
  /** How long the first connection may take, in ms (default 10000). */
  readonly connectTimeoutMs?: number;
}

/** A `host:port`, as a node or a sentinel is addressed. */
export interface RedisAddress {
  readonly host: string;
  readonly port: number;
}

/** What the three deployments share: credentials and TLS of the data nodes, and the time limit. */
interface ResolvedCommon {
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: ResolvedTls | undefined;
  readonly connectTimeoutMs: number;
  /** `host:port` (of the seeds or the sentinels, comma-separated), for messages: never a secret. */
  readonly address: string;
}

/** One server at a fixed address. */
export interface ResolvedServer extends ResolvedCommon {
  readonly kind: "server";
  readonly host: string;
  readonly port: number;
  readonly db: number;
}

/** A Redis Cluster. */
export interface ResolvedCluster extends ResolvedCommon {
  readonly kind: "cluster";
  readonly nodes: readonly RedisAddress[];
  /** The mode asked for; undefined lets the server's version choose. */
  readonly pubsub: "sharded" | "classic" | undefined;
}

/** A master behind Redis Sentinel. */
export interface ResolvedSentinel extends ResolvedCommon {
  readonly kind: "sentinel";
  readonly sentinels: readonly RedisAddress[];
  readonly name: string;
  readonly db: number;
  readonly sentinelUsername: string | undefined;
  readonly sentinelPassword: string | undefined;
  readonly sentinelTls: ResolvedTls | undefined;
}

/** The connection settings, resolved from the URL or the cluster or sentinel options. */
export type ResolvedConnection = ResolvedServer | ResolvedCluster | ResolvedSentinel;

function timeoutOf(options: RedisConnectionOptions): number {
  const ms = options.connectTimeoutMs ?? 10_000;
  if (!Number.isSafeInteger(ms) || ms < 1) {
    throw new RustStreamError(
      "invalid-argument",
      `connectTimeoutMs: ${options.connectTimeoutMs}; give a whole number of milliseconds, 1 or more`,
    );
  }
  return ms;
}

/**
 * A `host[:port]` of a seed node or a sentinel; a `redis://`/`rediss://` prefix is accepted (and
 * reported, since `rediss://` asks for TLS). Credentials there are refused: one place holds them.
 */
function parseAddress(
  what: string,
  text: string,
  defaultPort: number,
): RedisAddress & { tls: boolean } {
  const withScheme = /^[a-z]+:\/\//i.test(text) ? text : `redis://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new RustStreamError(
      "invalid-argument",
      `${what} "${text}" is not an address: write it as host:port`,
    );
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new RustStreamError(
      "invalid-argument",
      `${what} "${text}" has the scheme "${url.protocol}": write host:port (or redis://, rediss:// for TLS)`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new RustStreamError(
      "invalid-argument",
      `${what} carries a user or password: give them as the broker's username and password options, which every node is given`,
    );
  }
  if ((url.pathname !== "" && url.pathname !== "/") || url.search !== "") {
    throw new RustStreamError(
      "invalid-argument",
      `${what} "${url.host}" has a path or query: write host:port only`,
    );
  }
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1",
    port: url.port === "" ? defaultPort : Number(url.port),
    tls: url.protocol === "rediss:",
  };
}

function addressList(
  what: string,
  texts: readonly string[] | undefined,
  defaultPort: number,
): (RedisAddress & { tls: boolean })[] {
  if (!Array.isArray(texts) || texts.length === 0) {
    throw new RustStreamError(
      "invalid-argument",
      `${what} lists no address: give at least one host:port`,
    );
  }
  return texts.map((t) => parseAddress(what, t, defaultPort));
}

function databaseOf(what: string, db: number): number {
  if (!Number.isSafeInteger(db) || db < 0) {
    throw new RustStreamError(
      "invalid-argument",
      `${what} ${db} is not a database number: use 0, 1, ...`,
    );
  }
  return db;
}

export function resolveConnection(options: RedisConnectionOptions): ResolvedConnection {
  const chosen = [options.url, options.cluster, options.sentinel].filter((o) => o !== undefined);
  if (chosen.length > 1) {
    throw new RustStreamError(
      "invalid-argument",
      "RedisBroker takes one of url (one server), cluster or sentinel: give only the one you deploy",
    );
  }
  if (options.cluster !== undefined) return resolveCluster(options, options.cluster);
  if (options.sentinel !== undefined) return resolveSentinel(options, options.sentinel);
  return resolveServer(options);
}

function resolveServer(options: RedisConnectionOptions): ResolvedServer {
  const raw = options.url ?? "redis://127.0.0.1:6379";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RustStreamError(
      "invalid-argument",
      `the Redis url is not a URL: write it as redis://host:port or rediss://host:port`,
    );
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new RustStreamError(
      "invalid-argument",
      `the Redis url has the scheme "${url.protocol}": use redis:// or rediss:// (TLS); a cluster or a Sentinel set is given with the cluster or sentinel option`,
    );
  }
  const dbText = url.pathname.replace(/^\//, "");
  const db = dbText === "" ? 0 : Number(dbText);
  if (!Number.isSafeInteger(db) || db < 0) {
    throw new RustStreamError(
      "invalid-argument",
      `the Redis url's path "${url.pathname}" is not a database number: use /0, /1, ...`,
    );
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1") || "127.0.0.1";
  const port = url.port === "" ? 6379 : Number(url.port);
  const userInUrl = url.username === "" ? undefined : decodeURIComponent(url.username);
  const passwordInUrl = url.password === "" ? undefined : decodeURIComponent(url.password);
  return {
    kind: "server",
    host,
    port,
    db,
    username: options.username ?? userInUrl,
    password: options.password ?? passwordInUrl,
    tls: resolveTls("tls", options.tls, url.protocol === "rediss:"),
    connectTimeoutMs: timeoutOf(options),
    address: `${url.hostname}:${port}`,
  };
}

function resolveCluster(
  options: RedisConnectionOptions,
  cluster: RedisClusterOptions,
): ResolvedCluster {
  const nodes = addressList("a cluster seed node", cluster.nodes, 6379);
  const pubsub = cluster.pubsub;
  if (pubsub !== undefined && pubsub !== "sharded" && pubsub !== "classic") {
    throw new RustStreamError(
      "invalid-argument",
      `cluster.pubsub: "${String(pubsub)}"; give "sharded" or "classic"`,
    );
  }
  return {
    kind: "cluster",
    nodes: nodes.map(({ host, port }) => ({ host, port })),
    pubsub,
    username: options.username,
    password: options.password,
    tls: resolveTls(
      "tls",
      options.tls,
      nodes.some((n) => n.tls),
    ),
    connectTimeoutMs: timeoutOf(options),
    address: nodes.map((n) => `${n.host}:${n.port}`).join(","),
  };
}

function resolveSentinel(
  options: RedisConnectionOptions,
  sentinel: RedisSentinelOptions,
): ResolvedSentinel {
  const sentinels = addressList("a sentinel", sentinel.sentinels, 26379);
  if (typeof sentinel.name !== "string" || sentinel.name.length === 0) {
    throw new RustStreamError(
      "invalid-argument",
      "sentinel.name is missing: give the name the sentinels monitor the master under",
    );
  }
  return {
    kind: "sentinel",
    sentinels: sentinels.map(({ host, port }) => ({ host, port })),
    name: sentinel.name,
    db: databaseOf("sentinel.db", sentinel.db ?? 0),
    username: options.username,
    password: options.password,
    tls: resolveTls("tls", options.tls),
    sentinelUsername: sentinel.username,
    sentinelPassword: sentinel.password,
    sentinelTls: resolveTls(
      "sentinel.tls",
      sentinel.tls,
      sentinels.some((s) => s.tls),
    ),
    connectTimeoutMs: timeoutOf(options),
    address: sentinels.map((s) => `${s.host}:${s.port}`).join(","),
  };
}

const tlsTrustCodes = new Set([
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
]);

/** Where the broker connects, as a message names it. */
export function placeOf(settings: ResolvedConnection): string {
  if (settings.kind === "cluster") return `the Redis Cluster at ${settings.address}`;
  if (settings.kind === "sentinel") {
    return `the Redis master "${settings.name}" (found through the sentinels at ${settings.address})`;
  }
  return `Redis at ${settings.address}`;
}

/** Where the fix goes: the url for one server, the options for a cluster or Sentinel set. */
function passwordPlace(settings: ResolvedConnection): string {
  return settings.kind === "server"
    ? "in the URL or the password option"
    : "in the password option";
}

/** What went wrong on the first connection, said so that the reader knows what to change. */
export function connectionError(settings: ResolvedConnection, cause: unknown): RustStreamError {
  const message = cause instanceof Error ? cause.message : String(cause);
  const code = (cause as { code?: unknown } | undefined)?.code;
  const at = placeOf(settings);
  const seeds = settings.kind === "cluster" ? "cluster.nodes" : "the url";
  let text: string;
  if (/WRONGPASS|invalid password|invalid username-password/i.test(message)) {
    text =
      settings.username === undefined
        ? `${at} refused the password (${message}): check the password ${passwordPlace(settings)}`
        : `${at} refused user "${settings.username}" and its password (${message}): check the username and password ${settings.kind === "server" ? "in the URL or the options" : "options"}`;
  } else if (/NOAUTH|Authentication required/i.test(message)) {
    text =
      settings.kind === "server"
        ? `${at} requires a password (${message}): give it in the URL (redis://:password@host:port) or the password option`
        : `${at} requires a password (${message}): give it in the password option`;
  } else if (/NOPERM/.test(message)) {
    text = `${at}: the ACL user lacks a permission the broker needs (${message}): grant it with ACL SETUSER`;
  } else if (typeof code === "string" && tlsTrustCodes.has(code)) {
    text = `TLS to ${at} failed: the server's certificate is not signed by a CA this client trusts (${code}): pass tls.ca with the CA that signed it`;
  } else if (code === "CERT_HAS_EXPIRED") {
    text = `TLS to ${at} failed: the server's certificate has expired: renew it on the server`;
  } else if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    text = `TLS to ${at} failed: the certificate does not name this host (${message}): connect by a name it carries, or set tls.servername`;
  } else if (
    settings.kind === "sentinel" &&
    /No such master|unknown master|invalid reply: null/i.test(message)
  ) {
    text = `no sentinel at ${settings.address} monitors a master named "${settings.name}" (${message}): check sentinel.name against the sentinels' "sentinel monitor" lines`;
  } else if (settings.kind === "sentinel" && /All sentinels are unreachable/.test(message)) {
    text = `no sentinel answers at ${settings.address} (${message}): start the sentinels or fix sentinel.sentinels`;
  } else if (settings.kind === "cluster" && /cluster support disabled/i.test(message)) {
    text = `${settings.address} is not a Redis Cluster (${message}): give it as the url of one server, or give the seed nodes of a cluster`;
  } else if (settings.kind === "cluster" && /None of startup nodes is available/i.test(message)) {
    text = `no seed node of the cluster answers at ${settings.address} (${message}): start the cluster or fix cluster.nodes`;
  } else if (code === "ECONNREFUSED") {
    text = `nothing accepts connections at ${settings.address} (${message}): start Redis there or fix ${seeds}`;
  } else if (code === "ETIMEDOUT" || /timed? ?out/i.test(message)) {
    text = `${at} did not answer within ${settings.connectTimeoutMs} ms (${message}): check the address, and whether it needs TLS (rediss://)`;
  } else {
    text = `could not connect to ${at} (${message}): check ${settings.kind === "server" ? "the url" : "the addresses"}, the credentials and whether the server needs TLS`;
  }
  return new RustStreamError("broker-failure", text, { cause });
}
