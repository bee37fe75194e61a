import {
  bytes,
  type Codec,
  HeaderMap,
  headerNames,
  isRustStreamError,
  json,
  RustStreamError,
} from "@ruststream/core";
import type { MessageQuery, SubjectMessage } from "../client/link.js";
import { storeMessage } from "../jetStreamPublisher.js";
import { checkKey, kvHeaders, kvStream, kvSubject } from "../names.js";
import type { NatsPublishOptions, NatsReceipt, PublisherHost } from "../publisher.js";
import type { KvCodecs } from "./kvCodecs.js";
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

/** A key whose latest entry is a value put: its value, decoded by its content type or a read's `codec`. */
export interface KvValueEntry<T = unknown> extends KvEntryBase {
  readonly operation: "put";
  readonly value: T;
}

/**
 * A key whose latest entry is a delete or a purge marker (a purge also when the server marked the
 * key's last entry run out of time): the key holds no value, and its revision is the marker's.
 */
export interface KvRemovedEntry extends KvEntryBase {
  readonly operation: "delete" | "purge";
}

/** A key's latest entry: a value, or the marker of its delete or purge. */
export type KvEntry<T = unknown> = KvValueEntry<T> | KvRemovedEntry;

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

/** A put's: the codec its value goes through, and its own TTL. */
export interface KvWriteOptions<T = unknown> {
  /**
   * Encodes the value, as a publish's `codec` does (default `json`; core's `bytes` stores a
   * `Uint8Array` as it is), its `content-type` written on the entry.
   */
  readonly codec?: Codec<T>;
  /** The entry's own TTL (NATS 2.11), as a publish's `ttlMs`; the bucket must allow it (`markerTtlMs`). */
  readonly ttlMs?: NatsPublishOptions["ttlMs"];
}

/** A put's: with `revision`, stored only if the key is at it (`0`: the key has no entry). */
export interface KvPutOptions<T = unknown> extends KvWriteOptions<T> {
  readonly revision?: bigint | number;
}

/** A read's: the codec a value entry's bytes are decoded with, whatever its content type. */
export interface KvReadOptions<T = unknown> {
  /**
   * Decodes each value entry's bytes (the codec its put took; core's `bytes` for the bytes as
   * stored); a delete or purge marker is answered as it is. Without one, a value is decoded by the
   * codec of its `content-type` (the bucket's `codecs`, then core's `json` and `bytes`), and a
   * value without one is its bytes.
   */
  readonly codec?: Codec<T>;
}

/** A read's: `revision` reads that entry of the key rather than its latest; `codec` decodes it. */
export interface KvGetOptions<T = unknown> extends KvReadOptions<T> {
  readonly revision?: bigint | number;
}

/**
 * One KV bucket's reads (a key's latest entry, one revision, its history; the keys a filter
 * matches) with the stream's message gets, and its writes as the KV clients write them, each
 * published to the key's subject through the JetStream publish path: puts (a compare-and-set
 * `update`, a `create` of a key that holds no value), resolving with the new revision, and
 * deletes and purges (of a key, or of the keys a filter matches; the markers of removed keys
 * dropped), resolving with the stream's receipt (its `sequence` the marker's revision).
 */
export class KvBucket {
  readonly bucket: string;
  readonly #host: PublisherHost;
  /** Whether the bucket's stream takes direct gets (`allow_direct`, as the KV clients declare it). */
  readonly #direct: boolean;
  /** What a read decodes a value with, by its content type. */
  readonly #codecs: KvCodecs;

  constructor(host: PublisherHost, bucket: string, direct: boolean, codecs: KvCodecs) {
    this.#host = host;
    this.bucket = bucket;
    this.#direct = direct;
    this.#codecs = codecs;
  }

  /**
   * The key's latest entry (the stream's last message on its subject), or `undefined` when the
   * bucket holds no entry of it (never written, or purged away). A deleted or purged key answers
   * its marker: `operation` says which, and it has no value. With `revision`, that entry of the
   * key, or `undefined` when the bucket no longer holds it (dropped past the history, purged, or
   * never written); a revision that stored another key's entry is refused (`invalid-argument`).
   * On a bucket that allows direct gets (the KV default), any replica answers. A value is decoded
   * by the codec of its content type (bytes without one); with `codec`, by that one.
   */
  async get<T = unknown>(
    key: string,
    options: KvGetOptions<T> = {},
  ): Promise<KvEntry<T> | undefined> {
    const subject = kvSubject(this.bucket, key);
    const revision = options.revision === undefined ? undefined : checkRevision(options.revision);
    const message = await this.#read(
      revision === undefined ? { lastOn: subject } : { sequence: revision },
    );
    if (message === undefined) return undefined;
    if (message.subject === subject) return this.#entryOf(key, message, options.codec);
    throw new RustStreamError(
      "invalid-argument",
      `revision ${revision} of the KV bucket "${this.bucket}" is not an entry of the key "${key}": read a revision the key's history(key) lists, or the key's latest entry without one`,
    );
  }

  /**
   * The entries the bucket keeps of the key, oldest first: its puts and its delete and purge
   * markers (as many as the bucket's `history` keeps; a purge drops those before it). Empty when
   * the bucket holds no entry of it. Where the bucket allows direct gets, read with direct batch
   * gets (NATS 2.11, 1024 entries a request); else one entry at a time (each a message get).
   * Each value is decoded as `get` decodes it.
   */
  async history<T = unknown>(key: string, options: KvReadOptions<T> = {}): Promise<KvEntry<T>[]> {
    const { codec } = options;
    const subject = kvSubject(this.bucket, key);
    if (this.#direct) {
      this.#host.assertOpen();
      const all = await this.#host.link.messages(kvStream(this.bucket), {
        nextOn: subject,
        from: 1n,
      });
      this.#host.assertOpen();
      return (all ?? []).map((message) => this.#entryOf(key, message, codec));
    }
    const entries: KvEntry<T>[] = [];
    for (let from = 1n; ; ) {
      const message = await this.#read({ nextOn: subject, from });
      if (message === undefined) return entries;
      entries.push(this.#entryOf(key, message, codec));
      from = message.sequence + 1n;
    }
  }

  /**
   * The keys `filter` matches (a key, or a filter with `*` and `>`; all keys without one) whose
   * latest entry is a put: a deleted or purged key is not listed. In the order of their latest
   * revisions. Read with one direct batch get where the bucket allows direct gets and the filter
   * matches at most 1024 keys; else as the bucket's subjects, then each one's latest entry.
   */
  async keys(filter = ">"): Promise<string[]> {
    return (await this.#latest(filter, "KvBucket.keys"))
      .filter((entry) => entry.operation === "put")
      .map((entry) => entry.key);
  }

  /**
   * Deletes each key `filter` matches that holds a value (its `keys(filter)`), one marker a key as
   * `delete` writes it, as the KV clients delete by a filter: a key put while it runs may be left.
   * Resolves with the markers' receipts.
   */
  async deleteMatching(filter: string): Promise<NatsReceipt[]> {
    const keys = await this.keys(checkKey(filter, "KvBucket.deleteMatching", true));
    return inBatches(keys, (key) => this.delete(key));
  }

  /**
   * Purges each key `filter` matches that holds a value (its `keys(filter)`), one marker a key as
   * `purge` writes it (with `ttlMs`, each marker's own TTL), as the KV clients purge by a filter.
   */
  async purgeMatching(
    filter: string,
    options: Pick<KvPurgeOptions, "ttlMs"> = {},
  ): Promise<NatsReceipt[]> {
    const keys = await this.keys(checkKey(filter, "KvBucket.purgeMatching", true));
    const { ttlMs } = options;
    return inBatches(keys, (key) => this.purge(key, ttlMs === undefined ? {} : { ttlMs }));
  }

  /**
   * Drops the markers of deleted and purged keys: of each key whose latest entry is a delete or a
   * purge, the entries before its marker, and the marker too once it is older than `olderThanMs`
   * (30 minutes by default, as the KV clients; 0: every marker). What the stream drops is what
   * came before the marker's revision (after it, for an old marker), so a key put meanwhile keeps
   * its value. Resolves with how many entries went.
   */
  async purgeDeletes(options: { readonly olderThanMs?: number } = {}): Promise<number> {
    const { olderThanMs = 30 * 60 * 1000 } = options;
    if (!Number.isSafeInteger(olderThanMs) || olderThanMs < 0) {
      throw new RustStreamError(
        "invalid-argument",
        `KvBucket.purgeDeletes: olderThanMs is a whole number of milliseconds, 0 or more (0: every marker goes), not ${String(olderThanMs)}`,
      );
    }
    const oldest = Date.now() - olderThanMs;
    const markers = (await this.#latest(">", "KvBucket.purgeDeletes")).filter(
      (entry) => entry.operation !== "put",
    );
    const dropped = await inBatches(markers, (entry) =>
      this.#host.link.purgeSubject(
        kvStream(this.bucket),
        kvSubject(this.bucket, entry.key),
        entry.created.getTime() <= oldest ? entry.revision + 1n : entry.revision,
      ),
    );
    this.#host.assertOpen();
    return dropped.reduce((sum, n) => sum + n, 0);
  }

  /**
   * The latest entry of each key `filter` matches, in the order of their revisions: one direct
   * batch get (`multi_last`) where the bucket allows it and the server answers them all at once,
   * else the bucket's subjects, then a message get each.
   */
  async #latest(filter: string, what: string): Promise<KvEntry[]> {
    const pattern = `$KV.${this.bucket}.${checkKey(filter, what, true)}`;
    const prefix = `$KV.${this.bucket}.`.length;
    this.#host.assertOpen();
    if (this.#direct) {
      const last = await this.#host.link.messages(kvStream(this.bucket), { lastOf: pattern });
      this.#host.assertOpen();
      if (last !== undefined)
        return last.map((message) => this.#entryOf(message.subject.slice(prefix), message, bytes));
    }
    const subjects = await this.#host.link.subjects(kvStream(this.bucket), pattern);
    const latest = await inBatches(subjects, async (subject) => {
      const message = await this.#read({ lastOn: subject });
      // A key purged away since the subjects were read has no entry left.
      return message === undefined
        ? undefined
        : this.#entryOf(subject.slice(prefix), message, bytes);
    });
    return latest
      .filter((entry) => entry !== undefined)
      .sort((a, b) => (a.revision < b.revision ? -1 : 1));
  }

  /** What the bucket stream's message get answers `query` with. */
  async #read(query: MessageQuery): Promise<SubjectMessage | undefined> {
    this.#host.assertOpen();
    const message = await this.#host.link.message(kvStream(this.bucket), query, this.#direct);
    this.#host.assertOpen();
    return message;
  }

  /**
   * The entry `message` holds; a value decoded by `codec` when given, else by the codec of its
   * content type (core's `bytes` where only the entry's place and operation are wanted).
   */
  #entryOf<T>(key: string, message: SubjectMessage, codec: Codec<T> | undefined): KvEntry<T> {
    const base = { bucket: this.bucket, key, revision: message.sequence, created: message.time };
    const operation = operationOf(message);
    if (operation !== "put") return { ...base, operation };
    const value = this.#codecs.decode({ bucket: this.bucket, key, message }, codec);
    return { ...base, operation, value };
  }

  /**
   * Puts `value` as the key's new entry, through `codec` (default `json`) as a publish encodes
   * it, and resolves with the entry's revision. With `revision`, a compare-and-set: stored only if
   * the key is at it (`0`: the bucket holds no entry of the key), `publish-refused` otherwise,
   * naming the key, the revision expected and the one the server says the key is at.
   */
  async put<T = unknown>(key: string, value: T, options: KvPutOptions<T> = {}): Promise<bigint> {
    const { revision, ...write } = options;
    return this.#put(
      key,
      value,
      write,
      revision === undefined ? undefined : checkRevision(revision, 0n),
    );
  }

  /**
   * Puts `value` only if the key holds no value, as the KV clients create: stored when the bucket
   * holds no entry of the key, or (written then against the marker's revision) when its latest
   * entry is a delete or purge marker. A key that holds a value is refused (`publish-refused`,
   * naming its revision), storing nothing.
   */
  async create<T = unknown>(
    key: string,
    value: T,
    options: KvWriteOptions<T> = {},
  ): Promise<bigint> {
    try {
      return await this.#put(key, value, options, 0n);
    } catch (error) {
      if (!lostRevision(error)) throw error;
      // Refused for its revision: a key whose latest entry is a marker holds no value either.
      // Gone again since (a marker's own TTL): the refusal as it came, as the KV clients do.
      const latest = await this.get(key, { codec: bytes });
      if (latest === undefined) throw error;
      if (latest.operation !== "put") return this.#put(key, value, options, latest.revision);
      throw new RustStreamError(
        "publish-refused",
        `KvBucket.create: the key "${key}" of the KV bucket "${this.bucket}" holds a value (at revision ${latest.revision}): nothing stored; update(key, value, ${latest.revision}) replaces it`,
        { cause: error },
      );
    }
  }

  /**
   * Puts `value` only if the key is at `revision` (a compare-and-set, from 1: `create` writes a
   * key without one), refused (`publish-refused`) otherwise, naming the key, the revision
   * expected and the one the server says it is at; resolves with the new revision.
   */
  async update<T = unknown>(
    key: string,
    value: T,
    revision: bigint | number,
    options: KvWriteOptions<T> = {},
  ): Promise<bigint> {
    return this.#put(key, value, options, checkRevision(revision, 1n));
  }

  async #put<T>(
    key: string,
    value: T,
    { codec = json as Codec<T>, ttlMs }: KvWriteOptions<T>,
    revision: bigint | undefined,
  ): Promise<bigint> {
    const headers = new HeaderMap();
    headers.set(headerNames.contentType, codec.contentType);
    const receipt = await storeMessage(this.#host, {
      name: kvSubject(this.bucket, key),
      payload: codec.encode(value),
      headers,
      options: {
        ...(revision === undefined ? {} : { expect: { lastSubjectSequence: revision } }),
        ...(ttlMs === undefined ? {} : { ttlMs }),
      },
    });
    return receipt.sequence;
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

/** How many keys' reads or marks are asked at once: enough to overlap round trips, bounded. */
const BATCH = 100;

/** `work` on each item, at most `BATCH` at once: the results in the items' order. */
async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += BATCH)
    results.push(...(await Promise.all(items.slice(i, i + BATCH).map(work))));
  return results;
}

/** A write refused for its expected revision (the server's "wrong last sequence"), not else. */
function lostRevision(error: unknown): boolean {
  return (
    isRustStreamError(error, "publish-refused") &&
    error.cause instanceof Error &&
    /wrong last sequence/.test(error.cause.message)
  );
}

/**
 * A revision: a stream sequence, a whole number from 1 (from 0 where a put expects it: the key has
 * no entry).
 */
function checkRevision(revision: unknown, from = 1n): bigint {
  const valid =
    (typeof revision === "bigint" && revision >= from) ||
    (typeof revision === "number" && Number.isSafeInteger(revision) && revision >= from);
  if (!valid) {
    throw new RustStreamError(
      "invalid-argument",
      `a KV revision is a whole number from ${from} (the stream sequence that stored the entry, as an entry's revision gives it${from === 0n ? "; 0: the key has no entry" : ""}), not ${String(revision)}`,
    );
  }
  return BigInt(revision as bigint | number);
}
