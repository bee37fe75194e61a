// What producers and consumers need from the client that made them, declared here so neither
// imports client.ts (the client imports them).
import type { Logger } from "@ruststream/core";
import type { LinkStates } from "@ruststream/core/broker";
import type { BackoffOptions } from "./backoff.js";
import type { ConnectionSource, LookupResult } from "./lookup.js";

export interface ClientHost extends ConnectionSource {
  /** Where `topic` (a full name, or one partition's) is served. */
  lookup(topic: string): Promise<LookupResult>;
  /** The number of partitions of `topic`; 0 when it is not partitioned. */
  partitions(topic: string): Promise<number>;
  /** Producer and consumer ids, unique within the client (so across its connections). */
  newProducerId(): number;
  newConsumerId(): number;
  readonly operationTimeoutMs: number;
  readonly backoff: BackoffOptions;
  /** Aborts when the client closes: reconnect loops stop waiting. */
  readonly signal: AbortSignal;
  /** Where what nobody awaits is reported: an entry a consumer cannot decode. */
  readonly log: Logger;
  /** Each producer's and consumer's attachment, reported by its attacher: the client's state. */
  readonly states: LinkStates;
}
