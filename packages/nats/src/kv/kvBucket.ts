import { RustStreamError } from "@ruststream/core";
import type { MessageQuery, SubjectMessage } from "../client/link.js";
import { storeMessage } from "../jetStreamPublisher.js";
import { kvHeaders, kvStream, kvSubject } from "../names.js";
import type { NatsPublishOptions, NatsReceipt, PublisherHost } from "../publisher.js";
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

/** A purge's: its expectation, and its marker's own TTL. */
export interface KvPurgeOptions extends KvRemoveOptions {
  /**
   * The marker's own TTL (NATS 2.11), as a publish's `ttlMs`: whole seconds, or `"never"`. The
   * stream removes the marker after it, and the key with it. The bucket must allow it
   * (`markerTtlMs` on its declaration); else the purge is refused (`unsupported`).
   */
  readonly ttlMs?: NatsPublishOptions["ttlMs"];
}

/** A read's: `revision` reads that entry of the key rather than its latest. */
export interface KvGetOptions {
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
  /** Whether the bucket's stream takes direct gets (`allow_direct`, as the KV clients declare it). */
  readonly #direct: boolean;

  constructor(host: PublisherHost, bucket: string, direct: boolean) {
    this.#host = host;
    this.bucket = bucket;
    this.#direct = direct;
  }

  /**
   * The key's latest entry (the stream's last message on its subject), or `undefined` when the
   * bucket holds no entry of it (never written, or purged away). A deleted or purged key answers
   * its marker: `operation` says which, and it has no value. With `revision`, that entry of the
   * key, or `undefined` when the bucket no longer holds it (dropped past the history, purged, or
   * never written); a revision that stored another key's entry is refused (`invalid-argument`).
   * On a bucket that allows direct gets (the KV default), any replica answers.
   */
  async get(key: string, options: KvGetOptions = {}): Promise<KvEntry | undefined> {
    const subject = kvSubject(this.bucket, key);
    if (options.revision === undefined)
      return this.#entryOf(key, await this.#read({ lastOn: subject }));
    const revision = checkRevision(options.revision);
    const message = await this.#read({ sequence: revision });
    if (message === undefined || message.subject === subject) return this.#entryOf(key, message);
    throw new RustStreamError(
      "invalid-argument",
      `revision ${revision} of the KV bucket "${this.bucket}" is not an entry of the key "${key}": read a revision the key's history(key) lists, or the key's latest entry without one`,
    );
  }

  /**
   * The entries the bucket keeps of the key, oldest first: its puts and its delete and purge
   * markers (as many as the bucket's `history` keeps; a purge drops those before it). Empty when
   * the bucket holds no entry of it. Read one entry at a time (each a message get), so entries
   * written while it reads are read too.
   */
  async history(key: string): Promise<KvEntry[]> {
    const subject = kvSubject(this.bucket, key);
    const entries: KvEntry[] = [];
    for (let from = 1n; ; ) {
      const message = await this.#read({ nextOn: subject, from });
      if (message === undefined) return entries;
      entries.push(this.#entryOf(key, message));
      from = message.sequence + 1n;
    }
  }

  /** What the bucket stream's message get answers `query` with. */
  async #read(query: MessageQuery): Promise<SubjectMessage | undefined> {
    this.#host.assertOpen();
    const message = await this.#host.link.message(kvStream(this.bucket), query, this.#direct);
    this.#host.assertOpen();
    return message;
  }

  #entryOf(key: string, message: SubjectMessage): KvEntry;
  #entryOf(key: string, message: SubjectMessage | undefined): KvEntry | undefined;
  #entryOf(key: string, message: SubjectMessage | undefined): KvEntry | undefined {
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
   * the key's earlier entries. With `revision`, only if the key is at it; with `ttlMs`, the marker
   * itself goes after it.
   */
  purge(key: string, options: KvPurgeOptions = {}): Promise<NatsReceipt> {
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
    { revision, ttlMs }: KvPurgeOptions,
  ): Promise<NatsReceipt> {
    return storeMessage(
      this.#host,
      {
        name: kvSubject(this.bucket, key),
        payload: new Uint8Array(0),
        options: {
          ...(revision === undefined ? {} : { expect: { lastSubjectSequence: revision } }),
          ...(ttlMs === undefined ? {} : { ttlMs }),
        },
      },
      marks,
    );
  }
}

/** A revision to read: a stream sequence, a whole number from 1. */
function checkRevision(revision: unknown): bigint {
  const valid =
    (typeof revision === "bigint" && revision >= 1n) ||
    (typeof revision === "number" && Number.isSafeInteger(revision) && revision >= 1);
  if (!valid) {
    throw new RustStreamError(
      "invalid-argument",
      `a KV revision is a whole number from 1 (the stream sequence that stored the entry, as an entry's revision gives it), not ${String(revision)}`,
    );
  }
  return BigInt(revision as bigint | number);
}
