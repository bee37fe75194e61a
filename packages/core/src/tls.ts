import { RustStreamError } from "./errors.js";

/**
 * TLS to a broker's servers: one shape for every broker package. PEM as text or bytes (a Buffer
 * from `readFileSync` is a Uint8Array); the type names no Node type, so it compiles without
 * @types/node.
 */
export interface TlsOptions {
  /** The CA certificates (PEM) the server's certificate must chain to; the system's when absent. */
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[];
  /** A client certificate (PEM), for servers that authenticate clients by certificate. */
  readonly cert?: string | Uint8Array;
  /** The client certificate's private key (PEM). */
  readonly key?: string | Uint8Array;
  /** The private key's password, if it has one. */
  readonly keyPassword?: string;
  /** The name the server's certificate must carry (default: the host it connects to). */
  readonly servername?: string;
  /** `false` accepts any server certificate: for a test server only. Default `true`. */
  readonly verify?: boolean;
}

/** {@link TlsOptions} with every PEM as text: what a client library is handed. */
export interface ResolvedTls {
  readonly ca?: readonly string[];
  readonly cert?: string;
  readonly key?: string;
  readonly keyPassword?: string;
  readonly servername?: string;
  readonly verify?: boolean;
}

/**
 * The settings as node:tls's `connect` names them (and ioredis and kafkajs pass on), PEM as text so
 * the type names no Node type. Each key is present only when set.
 */
export interface NodeTlsSettings {
  ca?: string[];
  cert?: string;
  key?: string;
  passphrase?: string;
  servername?: string;
  rejectUnauthorized?: boolean;
}

// The names other clients use for the same settings, each pointing at this shape's.
const renamed: Readonly<Record<string, string>> = {
  rejectUnauthorized: "verify: false",
  passphrase: "keyPassword",
  ssl: "the settings themselves (tls: { ca, ... })",
  caFile: "ca: readFileSync(path)",
  certFile: "cert: readFileSync(path)",
  keyFile: "key: readFileSync(path)",
};
const known = new Set(["ca", "cert", "key", "keyPassword", "servername", "verify"]);

const decoder = new TextDecoder();

function isList<T>(value: T | readonly T[]): value is readonly T[] {
  return Array.isArray(value);
}

/** One PEM as text, or an error that names the fix (a file path is the usual mistake). */
function pemText(what: string, value: unknown): string {
  const text =
    typeof value === "string" ? value : value instanceof Uint8Array ? decoder.decode(value) : null;
  if (text === null) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: give the PEM as text or bytes (readFileSync(path)), not ${value === null ? "null" : typeof value}`,
    );
  }
  if (!text.includes("-----BEGIN")) {
    throw new RustStreamError(
      "invalid-argument",
      `${what} is not PEM (no "-----BEGIN" line): give the file's content, readFileSync(path), not its path`,
    );
  }
  return text;
}

/**
 * Reads a broker's `tls` option: `true` (or an address that asks for TLS, `implied`) for the
 * system's trust store, `false` or absent for none, settings as given. Every PEM is read as text,
 * and a key this shape does not have fails with the name it does have, since other clients spell
 * the same settings differently (`rejectUnauthorized`, `passphrase`).
 */
export function resolveTls(
  what: string,
  option: boolean | TlsOptions | undefined,
  implied = false,
): ResolvedTls | undefined {
  if (option === false) return undefined;
  if (option === undefined || option === true) return option === true || implied ? {} : undefined;
  if (typeof option !== "object" || option === null) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: give true (the system's CAs) or the settings { ca, cert, key, keyPassword, servername, verify }`,
    );
  }
  for (const key of Object.keys(option)) {
    if (known.has(key)) continue;
    const instead = renamed[key];
    throw new RustStreamError(
      "invalid-argument",
      instead === undefined
        ? `${what}.${key} is not a TLS setting: the settings are ca, cert, key, keyPassword, servername and verify`
        : `${what}.${key} is not a TLS setting here: give ${instead}`,
    );
  }
  const { ca, cert, key, keyPassword, servername, verify } = option;
  if (keyPassword !== undefined && key === undefined) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}.keyPassword is the password of tls.key: give the key too, or leave the password out`,
    );
  }
  if ((cert === undefined) !== (key === undefined)) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: a client certificate needs its key: give both cert and key, or neither`,
    );
  }
  if (verify !== undefined && typeof verify !== "boolean") {
    throw new RustStreamError("invalid-argument", `${what}.verify: give true or false`);
  }
  if (servername !== undefined && (typeof servername !== "string" || servername.length === 0)) {
    throw new RustStreamError("invalid-argument", `${what}.servername: give a host name`);
  }
  return {
    ...(ca === undefined
      ? {}
      : {
          ca: isList(ca)
            ? ca.map((one, i) => pemText(`${what}.ca[${i}]`, one))
            : [pemText(`${what}.ca`, ca)],
        }),
    ...(cert === undefined ? {} : { cert: pemText(`${what}.cert`, cert) }),
    ...(key === undefined ? {} : { key: pemText(`${what}.key`, key) }),
    ...(keyPassword === undefined ? {} : { keyPassword }),
    ...(servername === undefined ? {} : { servername }),
    ...(verify === undefined ? {} : { verify }),
  };
}

/** The settings as node:tls names them; absent ones stay absent. */
export function nodeTlsSettings(tls: ResolvedTls): NodeTlsSettings {
  const { ca, cert, key, keyPassword, servername, verify } = tls;
  return {
    ...(ca === undefined ? {} : { ca: [...ca] }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
    ...(keyPassword === undefined ? {} : { passphrase: keyPassword }),
    ...(servername === undefined ? {} : { servername }),
    ...(verify === undefined ? {} : { rejectUnauthorized: verify }),
  };
}
