import type { Broker, Logger } from "@ruststream/core";
import type { PatternOptions } from "./patternOptions.js";

/** What `new RustStreamServer(options)` takes. */
export interface RustStreamServerOptions {
  /** The broker every pattern is read from: `new KafkaBroker(...)`, `new RedisBroker(...)`, ... */
  readonly broker: Broker;
  /**
   * The service's name: what the brokers derive a consumer group from (every replica shares it),
   * and what logs and dead letters name.
   */
  readonly name: string;
  /** Default "0.0.0". */
  readonly version?: string;
  /** Options for every pattern; a pattern's own (`extras.ruststream`) take precedence, key by key. */
  readonly defaults?: PatternOptions;
  /** Default: Nest's logger, in the context "RustStreamServer". */
  readonly logger?: Logger;
  /** How long `close()` waits for running handlers before aborting them (default 10 000 ms). */
  readonly shutdownTimeoutMs?: number;
}
