import { storeMessage } from "../jetStreamPublisher.js";
import { kvHeaders, kvStream, kvSubject } from "../names.js";
import type { NatsReceipt, PublisherHost } from "../publisher.js";
import { operationOf } from "./kvDelivery.js";

/** What every entry `get` reads carries: where it is, and when it was written. */
interface KvEntryBase {
  readonly bucket: string;
  readonly key: string;
  /** The bucket stream's sequence that stored it: what a compare-and-set write expects. */
  readonly revision: bigint;
  /** When the server stored it. */
  readonly created: Date;
}

/** A key whose latest entry is a value put. */
export interface KvValueEntry extends KvEntryBase {
  readonly operation: "put";
  readonly value: Uint8Array;
}

/**
 * A key whose latest entry is a delete or a purge marker (a purge also when the server marked the
 * key's last entry run out of time): the key holds no value, and its revision is the marker's.
 */
export interface KvRemovedEntry extends KvEntryBase {
  readonly operation: "delete" | "purge";
}

/** A key's latest entry: a value, or the marker of its delete or purge. */
export type KvEntry = KvValueEntry | KvRemovedEntry;

/** A delete's or a purge's expectation: stored only if the key is at `revision`. */
export interface KvRemoveOptions {
  readonly revision?: bigint | number;
}

/**
 * One KV bucket's reads of a key and its deletes and purges, written as the KV clients write them:
 * a marker published to the key's subject through the JetStream publish path, resolving with the
 * stream's receipt (its `sequence` the marker's revision). A put is a JetStream publish to
 * `kvSubject(bucket, key)`, as before: this handle does not put.
 */
export class KvBucket {
  readonly bucket: string;
  readonly #host: PublisherHost;

  constructor(host: PublisherHost, bucket: string) {
    this.#host = host;
    this.bucket = bucket;
  }

  /**
   * The key's latest entry (the stream's last message on its subject), or `undefined` when the
   * bucket holds no entry of it (never written, or purged away). A deleted or purged key answers
   * its marker: `operation` says which, and it has no value.
   */
  async get(key: string): Promise<KvEntry | undefined> {
    this.#host.assertOpen();
    const subject = kvSubject(this.bucket, key);
    const message = await this.#host.link.lastMessage(kvStream(this.bucket), subject);
    this.#host.assertOpen();
    if (message === undefined) return undefined;
    const base = { bucket: this.bucket, key, revision: message.sequence, created: message.time };
    const operation = operationOf(message);
    return operation === "put"
      ? { ...base, operation, value: message.payload }
      : { ...base, operation };
  }

  /**
   * Deletes the key: a `KV-Operation: DEL` marker, its history kept. With `revision`, only if the
   * key is at it (`publish-refused` otherwise, storing nothing).
   */
  delete(key: string, options: KvRemoveOptions = {}): Promise<NatsReceipt> {
    return this.#mark(key, [[kvHeaders.operation, "DEL"]], options);
  }

  /**
   * Purges the key: a `KV-Operation: PURGE` marker with `Nats-Rollup: sub`, so the server drops
   * the key's earlier entries. With `revision`, only if the key is at it.
   */
  purge(key: string, options: KvRemoveOptions = {}): Promise<NatsReceipt> {
    return this.#mark(
      key,
      [
        [kvHeaders.operation, "PURGE"],
        [kvHeaders.rollup, "sub"],
      ],
      options,
    );
  }

  #mark(
    key: string,
    marks: readonly (readonly [string, string])[],
    { revision }: KvRemoveOptions,
  ): Promise<NatsReceipt> {
    return storeMessage(
      this.#host,
      {
        name: kvSubject(this.bucket, key),
        payload: new Uint8Array(0),
        ...(revision === undefined
          ? {}
          : { options: { expect: { lastSubjectSequence: revision } } }),
      },
      marks,
    );
  }
}
