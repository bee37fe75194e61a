// The client: configuration, the pool of connections (one per broker, shared by all producers and
// consumers on it), lookups, and the producers and consumers it made, which it closes with itself.
import { consoleLogger, type Logger, RustStreamError, type TlsOptions } from "@ruststream/core";
import { LinkStates, type ResolvedTls, resolveTls } from "@ruststream/core/broker";
import type { BackoffOptions } from "./backoff.js";
import { Connection, type TokenSource } from "./connection.js";
import { Consumer } from "./consumer/consumer.js";
import type { ConsumerOptions } from "./consumer/consumerOptions.js";
import { closedError } from "./errors.js";
import type { ClientHost } from "./host.js";
import {
  DEFAULT_MAX_REDIRECTS,
  type LookupResult,
  lookupTopic,
  partitionedTopicMetadata,
} from "./lookup.js";
import { Producer } from "./producer/producer.js";
import type { ProducerOptions } from "./producer/producerOptions.js";
import { type BrokerAddress, parseServiceUrl } from "./serviceUrl.js";

export interface ClientOptions {
  /** `pulsar://host:6650` or `pulsar+ssl://host:6651`; several hosts separated by commas. */
  readonly serviceUrl: string;
  /** Token authentication: the token, or a function giving the current one. */
  readonly token?: TokenSource;
  /** TLS settings for `pulsar+ssl://` addresses: the CA, a client certificate, servername, verify. */
  readonly tls?: TlsOptions;
  /** How long creating a producer or consumer (lookups and retries included) may take (default 30 s). */
  readonly operationTimeoutMs?: number;
  /** TCP connect plus handshake (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** Ping interval; a broker silent for two intervals is taken for dead (default 30 s). */
  readonly keepAliveIntervalMs?: number;
  /** Reconnect backoff (default 100 ms doubling to 30 s). */
  readonly backoff?: BackoffOptions;
  /** Lookup redirects followed before giving up (default 20). */
  readonly maxLookupRedirects?: number;
  /** The advertised listener to look topics up for, on brokers with several. */
  readonly listenerName?: string;
  /**
   * Where the client reports what no caller awaits: an entry a consumer cannot decode, at error
   * (pino's call shape). Default: core's console logger, on stderr.
   */
  readonly logger?: Logger;
}

interface Closable {
  close(): Promise<void>;
}

/** A Pulsar client speaking the binary protocol. Creating it does no I/O. */
export class PulsarClient implements ClientHost {
  readonly operationTimeoutMs: number;
  readonly backoff: BackoffOptions;
  readonly log: Logger;
  /**
   * The client's state: each producer's and consumer's attachment (one per partition), reported by
   * its attacher as it loses it and attaches again.
   */
  readonly states = new LinkStates();
  readonly #addresses: BrokerAddress[];
  readonly #tls: ResolvedTls | undefined;
  #nextAddress = 0;
  readonly #connections = new Map<string, Promise<Connection>>();
  readonly #opened = new Set<Closable>();
  readonly #abort = new AbortController();
  #nextProducerId = 0;
  #nextConsumerId = 0;
  #closed = false;
  /** Connections opened so far (a reconnect opens another): for tests and diagnostics. */
  connectionsOpened = 0;

  readonly #options: ClientOptions;

  constructor(options: ClientOptions) {
    this.#options = options;
    this.#addresses = parseServiceUrl(options.serviceUrl);
    this.#tls = resolveTls("tls", options.tls);
    // The scheme turns TLS on; settings beside a plain address would silently go unused.
    if (this.#tls !== undefined && !this.#addresses.some((a) => a.tls)) {
      throw new RustStreamError(
        "invalid-argument",
        `tls is set but ${options.serviceUrl} is not a TLS address: give pulsar+ssl://host:6651 (or leave tls out)`,
      );
    }
    this.operationTimeoutMs = options.operationTimeoutMs ?? 30_000;
    this.backoff = options.backoff ?? {};
    this.log = options.logger ?? consoleLogger();
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  serviceAddress(): BrokerAddress {
    const address = this.#addresses[this.#nextAddress % this.#addresses.length]!;
    this.#nextAddress++;
    return address;
  }

  /** The pooled connection to `logical` through `physical`, opened when there is none. */
  connection(logical: BrokerAddress, physical: BrokerAddress = logical): Promise<Connection> {
    if (this.#closed) return Promise.reject(closedError("the Pulsar client"));
    const key = `${logical.url}|${physical.url}`;
    const existing = this.#connections.get(key);
    if (existing) return existing;
    this.connectionsOpened++;
    const opening = Connection.open(logical, physical, {
      ...(this.#options.token === undefined ? {} : { token: this.#options.token }),
      ...(this.#tls === undefined ? {} : { tls: this.#tls }),
      ...(this.#options.connectTimeoutMs === undefined
        ? {}
        : { connectTimeoutMs: this.#options.connectTimeoutMs }),
      ...(this.#options.keepAliveIntervalMs === undefined
        ? {}
        : { keepAliveIntervalMs: this.#options.keepAliveIntervalMs }),
      operationTimeoutMs: this.operationTimeoutMs,
    });
    this.#connections.set(key, opening);
    opening.then(
      (connection) =>
        connection.onClose(() => {
          // Only forget the connection that closed, not a newer one under the same key.
          if (this.#connections.get(key) === opening) this.#connections.delete(key);
        }),
      () => {
        if (this.#connections.get(key) === opening) this.#connections.delete(key);
      },
    );
    return opening;
  }

  lookup(topic: string): Promise<LookupResult> {
    return lookupTopic(this, topic, {
      maxRedirects: this.#options.maxLookupRedirects ?? DEFAULT_MAX_REDIRECTS,
      ...(this.#options.listenerName === undefined
        ? {}
        : { listenerName: this.#options.listenerName }),
    });
  }

  partitions(topic: string): Promise<number> {
    return partitionedTopicMetadata(this, topic);
  }

  newProducerId(): number {
    return this.#nextProducerId++;
  }

  newConsumerId(): number {
    return this.#nextConsumerId++;
  }

  /** Creates a producer; resolves once the broker has accepted it (on every partition). */
  async createProducer(options: ProducerOptions): Promise<Producer> {
    if (this.#closed) throw closedError("the Pulsar client");
    const producer = await Producer.create(this, options);
    return this.#track(producer);
  }

  /** Subscribes; resolves once the broker has accepted the consumer (on every partition). */
  async subscribe(options: ConsumerOptions): Promise<Consumer> {
    if (this.#closed) throw closedError("the Pulsar client");
    const consumer = await Consumer.subscribe(this, options);
    return this.#track(consumer);
  }

  #track<T extends Closable>(handle: T): T {
    if (this.#closed) {
      void handle.close();
      throw closedError("the Pulsar client");
    }
    const close = handle.close.bind(handle);
    handle.close = async () => {
      this.#opened.delete(handle);
      await close();
    };
    this.#opened.add(handle);
    return handle;
  }

  /** Closes every producer (after their pending sends) and consumer, then the connections. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#opened].map((h) => h.close()));
    this.#abort.abort();
    const connections = await Promise.allSettled([...this.#connections.values()]);
    this.#connections.clear();
    for (const c of connections) if (c.status === "fulfilled") c.value.close();
  }
}
