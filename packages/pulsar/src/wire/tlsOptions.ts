import type { ConnectionOptions } from "node:tls";

/**
 * TLS settings for `pulsar+ssl://` addresses: the subset of node:tls's options this client passes
 * on, declared here so the published types compile without @types/node. PEM as text or bytes (a
 * Buffer from `readFileSync` is a Uint8Array).
 */
export interface PulsarTlsOptions {
  /** The CA certificates (PEM) the broker's certificate must chain to; the system's when absent. */
  readonly ca?: string | Uint8Array | readonly (string | Uint8Array)[];
  /** A client certificate (PEM), for brokers that authenticate clients by certificate. */
  readonly cert?: string | Uint8Array;
  /** The client certificate's private key (PEM). */
  readonly key?: string | Uint8Array;
  /** The private key's password, if it has one. */
  readonly passphrase?: string;
  /** The name the certificate must carry (default: the host, unless it is an IP address). */
  readonly servername?: string;
  /** `false` accepts any certificate: for a test broker only. Default `true`. */
  readonly rejectUnauthorized?: boolean;
}

/** PEM as node:tls takes it: text as is, bytes as a Buffer over the same memory (no copy). */
function pem(value: string | Uint8Array): string | Buffer {
  return typeof value === "string" || Buffer.isBuffer(value)
    ? value
    : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function isList<T>(value: T | readonly T[]): value is readonly T[] {
  return Array.isArray(value);
}

/** The settings as node:tls's `connect` takes them; absent ones stay absent. */
export function nodeTlsOptions(tls: PulsarTlsOptions): ConnectionOptions {
  const { ca, cert, key, passphrase, servername, rejectUnauthorized } = tls;
  return {
    ...(ca === undefined ? {} : { ca: isList(ca) ? ca.map(pem) : pem(ca) }),
    ...(cert === undefined ? {} : { cert: pem(cert) }),
    ...(key === undefined ? {} : { key: pem(key) }),
    ...(passphrase === undefined ? {} : { passphrase }),
    ...(servername === undefined ? {} : { servername }),
    ...(rejectUnauthorized === undefined ? {} : { rejectUnauthorized }),
  };
}
