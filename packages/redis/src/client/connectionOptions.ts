import { RustStreamError } from "@ruststream/core";

/**
 * TLS settings; `rediss://` turns TLS on with the system's CAs. PEM as text or bytes: a Buffer from
 * `readFileSync` is a Uint8Array, and the type names no Node type, so it compiles without @types/node.
 */
export interface RedisTlsOptions {
  /** The CA (PEM) the server's certificate must chain to, when it is not a public one. */
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[];
  /** A client certificate and key (PEM), for servers that ask for one. */
  readonly cert?: string | Uint8Array;
  readonly key?: string | Uint8Array;
  /** The name the certificate must carry (default: the host). */
  readonly servername?: string;
}

export interface RedisConnectionOptions {
  /** `redis://[user:password@]host[:port][/db]` or `rediss://` for TLS (default `redis://127.0.0.1:6379`). */
  readonly url?: string;
  /** The ACL user; overrides the URL's. */
  readonly username?: string;
  /** The password (of the ACL user, or of `default`); overrides the URL's. */
  readonly password?: string;
  /** TLS: `true` for the system's CAs, or the settings; `rediss://` implies `true`. */
  readonly tls?: boolean | RedisTlsOptions;
  /** How long the first connection may take, in ms (default 10000). */
  readonly connectTimeoutMs?: number;
}

/** The connection settings, resolved from the URL and the options. */
export interface ResolvedConnection {
  readonly host: string;
  readonly port: number;
  readonly db: number;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly tls: RedisTlsOptions | undefined;
  readonly connectTimeoutMs: number;
  /** `host:port`, for messages and docs: never a secret. */
  readonly address: string;
}

export function resolveConnection(options: RedisConnectionOptions): ResolvedConnection {
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
      `the Redis url has the scheme "${url.protocol}": use redis:// or rediss:// (TLS)`,
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
  const tlsOption = options.tls;
  const tls =
    tlsOption === false
      ? undefined
      : typeof tlsOption === "object"
        ? tlsOption
        : tlsOption === true || url.protocol === "rediss:"
          ? {}
          : undefined;
  return {
    host,
    port,
    db,
    username: options.username ?? userInUrl,
    password: options.password ?? passwordInUrl,
    tls,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    address: `${url.hostname}:${port}`,
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

/** What went wrong on the first connection, said so that the reader knows what to change. */
export function connectionError(settings: ResolvedConnection, cause: unknown): RustStreamError {
  const message = cause instanceof Error ? cause.message : String(cause);
  const code = (cause as { code?: unknown } | undefined)?.code;
  const at = `Redis at ${settings.address}`;
  let text: string;
  if (/WRONGPASS|invalid password|invalid username-password/i.test(message)) {
    text =
      settings.username === undefined
        ? `${at} refused the password (${message}): check the password in the URL or the password option`
        : `${at} refused user "${settings.username}" and its password (${message}): check the username and password in the URL or the options`;
  } else if (/NOAUTH|Authentication required/i.test(message)) {
    text = `${at} requires a password (${message}): give it in the URL (redis://:password@host:port) or the password option`;
  } else if (/NOPERM/.test(message)) {
    text = `${at}: the ACL user lacks a permission the broker needs (${message}): grant it with ACL SETUSER`;
  } else if (typeof code === "string" && tlsTrustCodes.has(code)) {
    text = `TLS to ${at} failed: the server's certificate is not signed by a CA this client trusts (${code}): pass tls.ca with the CA that signed it`;
  } else if (code === "CERT_HAS_EXPIRED") {
    text = `TLS to ${at} failed: the server's certificate has expired: renew it on the server`;
  } else if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    text = `TLS to ${at} failed: the certificate does not name this host (${message}): connect by a name it carries, or set tls.servername`;
  } else if (code === "ECONNREFUSED") {
    text = `nothing accepts connections at ${settings.address} (${message}): start Redis there or fix the url`;
  } else if (code === "ETIMEDOUT" || /timed? ?out/i.test(message)) {
    text = `${at} did not answer within ${settings.connectTimeoutMs} ms (${message}): check the address, and whether it needs TLS (rediss://)`;
  } else {
    text = `could not connect to ${at} (${message}): check the url, the credentials and whether the server needs TLS (rediss://)`;
  }
  return new RustStreamError("broker-failure", text, { cause });
}
