import type { Clock, Logger, TlsOptions } from "@ruststream/core";
import type { InProcessSettings } from "./inProcess/inProcessPulsar.js";
import type { TokenSource } from "./wire/connection.js";

// The broker's options, read by the broker (checked when it is built, used to connect) and by its
// connection: in a file of their own, so broker.ts imports connection.ts and nothing imports either
// back.

export interface PulsarBrokerOptions {
  /** `pulsar://host:6650`, or `pulsar+ssl://host:6651` for TLS; several hosts separated by commas. */
  readonly url: string;
  /**
   * Token authentication: the token (a JWT the broker's key signed), or a function giving the
   * current one (asked again when the broker challenges). Never shown in descriptions or logs.
   */
  readonly token?: TokenSource;
  /** TLS for `pulsar+ssl://`: `ca` (the CA that signed the broker's certificate), `cert`, `key`... */
  readonly tls?: TlsOptions;
  /**
   * The subscription of bare names and of Shared and Key_Shared descriptors that name none, the
   * same in every replica so they share the work. Default: the name of the app that connects.
   */
  readonly subscription?: string;
  /** Creating a producer or consumer, lookups and retries included (default 30 s). */
  readonly operationTimeoutMs?: number;
  /** TCP connect plus handshake (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** The namespace of the reply topics requests create (default `public/default`). */
  readonly inboxNamespace?: string;
  /**
   * A producer nothing published through for this long is closed (default 5 minutes), so a
   * responder answering many requesters' reply topics does not keep a producer for each forever.
   */
  readonly producerIdleMs?: number;
  /** Where request timeouts take time from (the in-process mode uses the test's clock). */
  readonly clock?: Clock;
  /**
   * Where the connection reports what no delivery carries to the app: an entry a consumer cannot
   * decode, at error. Default: the logger of the app that connects, else core's console logger.
   */
  readonly logger?: Logger;
  /** The in-process stand-in's own settings: what a real broker learns from its cluster. */
  readonly inProcess?: InProcessSettings;
}
