import { RustStreamError } from "@ruststream/core";
import { type DeadLetterHeaderNames, deadLetterHeaderNames } from "@ruststream/core/broker";

/**
 * The names this broker writes on NATS's wire, RustStream's own (`ruststream-nats`), so a Rust
 * service on the same subjects reads them: the partition key travels in a header of its own, and a
 * dead-lettered copy carries core's origin headers (`x-ruststream-dlq-source`: the subject,
 * `-position`: `<stream>:<stream sequence>`, `-reason`) and, from a JetStream consumer, the
 * consumer's name.
 */
export const natsHeaderNames = {
  /** The key keyed lanes read, as the Rust crate writes it. */
  partitionKey: "nats-partition-key",
  /** The JetStream consumer a dead-lettered message was delivered by. */
  deadLetterConsumer: "x-ruststream-dlq-consumer",
} as const;

/** Core's dead-letter header names: the other brokers' and RustStream's. */
export const natsDeadLetterHeaderNames: DeadLetterHeaderNames = deadLetterHeaderNames;

/** JetStream's own publish headers (the server reads them), as NATS names them. */
export const jetStreamHeaders = {
  msgId: "Nats-Msg-Id",
  expectedStream: "Nats-Expected-Stream",
  expectedLastSequence: "Nats-Expected-Last-Sequence",
  expectedLastSubjectSequence: "Nats-Expected-Last-Subject-Sequence",
  expectedLastMsgId: "Nats-Expected-Last-Msg-Id",
  /** A message's own time to live (NATS 2.11, on a stream with `allow_msg_ttl`): whole seconds. */
  ttl: "Nats-TTL",
} as const;

/** The headers of a message schedule (NATS 2.12), as the server reads and writes them. */
export const scheduleHeaders = {
  /** `@at <RFC 3339>`, `@every <duration>`, or a cron pattern: when the schedule delivers. */
  schedule: "Nats-Schedule",
  /** The subject a delivery is stored on. */
  target: "Nats-Schedule-Target",
  /** The IANA time zone a cron pattern is read in. */
  timeZone: "Nats-Schedule-Time-Zone",
  /** The TTL each delivery carries (as its `Nats-TTL`): whole seconds, or `never`. */
  ttl: "Nats-Schedule-TTL",
  /** The subject whose last message is delivered in place of the schedule's own (NATS 2.14). */
  source: "Nats-Schedule-Source",
  /** `sub`: each delivery is a rollup of its target (as its `Nats-Rollup`). */
  rollup: "Nats-Schedule-Rollup",
  /** On a delivery: the schedule subject it came from. */
  scheduler: "Nats-Scheduler",
  /** On a delivery: `purge` (a one-time schedule, removed with it) or the next time it fires. */
  next: "Nats-Schedule-Next",
} as const;

/** The headers a KV bucket's entries carry, as the server and the clients write them. */
export const kvHeaders = {
  /** `DEL` on a delete marker, `PURGE` on a purge marker; absent on a put. */
  operation: "KV-Operation",
  /** `sub` on a purge: the server drops the key's earlier entries. */
  rollup: "Nats-Rollup",
  /**
   * On the marker the server writes once a key's last entry ran out of time (its TTL, or the
   * bucket's age): `MaxAge`. The KV clients read such a marker as a purge.
   */
  markerReason: "Nats-Marker-Reason",
} as const;

/** A bucket name as the server and the clients take one: letters, digits, `-` and `_`. */
export function checkBucket(bucket: unknown, what: string): string {
  if (typeof bucket !== "string" || !/^[-\w]+$/.test(bucket)) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: ${JSON.stringify(bucket)} is not a KV bucket name: letters, digits, "-" and "_" only`,
    );
  }
  return bucket;
}

/**
 * A key as the clients take one: letters, digits and `-/_=.`, dot-separated tokens none empty. A
 * filter (`wildcards`) may have `*` as a whole token and `>` as the last.
 */
export function checkKey(key: unknown, what: string, wildcards: boolean): string {
  const tokens = typeof key === "string" ? key.split(".") : [];
  const bad =
    typeof key !== "string" ||
    tokens.some((t) => t === "") ||
    tokens.some((t, i) =>
      t === "*" || (t === ">" && i === tokens.length - 1) ? !wildcards : !/^[-/=\w]+$/.test(t),
    );
  if (bad) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: ${JSON.stringify(key)} is not a KV ${wildcards ? "key or filter" : "key"}: dot-separated tokens of letters, digits, "-", "/", "_" and "="${wildcards ? ', "*" a whole token, ">" only the last' : ", no wildcards"}`,
    );
  }
  return key as string;
}

/** The stream that holds a bucket, as the server names it. */
export function kvStream(bucket: string): string {
  return `KV_${bucket}`;
}

/**
 * The subject a key (or a filter) of a bucket is stored on: a put is a JetStream publish to it, and
 * its revision the stream sequence that stored it.
 */
export function kvSubject(bucket: string, key: string): string {
  return `$KV.${checkBucket(bucket, "kvSubject")}.${checkKey(key, "kvSubject", false)}`;
}

/** The stream that holds an object store, as the server names it. */
export function objStream(bucket: string): string {
  return `OBJ_${bucket}`;
}

/** The subject of an object's entry (its info), as the object store clients write it. */
export function objMetaSubject(bucket: string, name: string): string {
  const encoded = Buffer.from(name, "utf8")
    .toString("base64")
    .replaceAll("+", "-")
    .replaceAll("/", "_");
  return `$O.${bucket}.M.${encoded}`;
}

/** The subject an object's chunks are stored on, by the object's unique id. */
export function objChunkSubject(bucket: string, nuid: string): string {
  return `$O.${bucket}.C.${nuid}`;
}

/** An object's name: any text but the empty one. */
export function checkObjectName(name: unknown, what: string): string {
  if (typeof name !== "string" || name === "") {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: an object's name is non-empty text, not ${JSON.stringify(name)}`,
    );
  }
  return name;
}

/** A subject NATS accepts: dot-separated tokens, none empty, no whitespace; `>` only last. */
export function checkSubject(subject: unknown, what: string): string {
  const tokens = typeof subject === "string" ? subject.split(".") : [];
  const bad =
    typeof subject !== "string" ||
    subject === "" ||
    /\s/.test(subject) ||
    tokens.some((t) => t === "") ||
    tokens.slice(0, -1).includes(">") ||
    tokens.some((t) => t !== "*" && t !== ">" && /[*>]/.test(t));
  if (bad) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}: ${JSON.stringify(subject)} is not a NATS subject: dot-separated tokens, none empty, no spaces, "*" a whole token, ">" only the last`,
    );
  }
  return subject as string;
}
