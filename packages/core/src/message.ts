import { type DeadLetterOrigin, writeDeadLetterOrigin } from "./deadLetter.js";
import type { Delivery } from "./delivery.js";
import { RustStreamError } from "./errors.js";
import { HeaderMap, type ReadonlyHeaderMap } from "./headerMap.js";
import { headerNames } from "./headerNames.js";
import { utf8Bytes } from "./utf8.js";

/**
 * What a publisher sends. The broker maps `partitionKey` and `deadLetterOrigin` onto its own wire
 * (a native key where it has one, core's header names elsewhere), so handlers stay broker-neutral.
 *
 * The broker copies what it keeps: a caller may reuse its buffers once `publish` has resolved.
 */
export interface OutgoingMessage<TOptions = never> {
  /** The topic, stream or queue to publish to. */
  readonly name: string;
  readonly payload: Uint8Array;
  readonly headers?: ReadonlyHeaderMap;
  /** Keeps messages with one key in order, on brokers that partition or key them. */
  readonly partitionKey?: Uint8Array | string;
  /** Set by the runtime on a dead-lettered copy; see {@link DeadLetterOrigin}. */
  readonly deadLetterOrigin?: DeadLetterOrigin;
  /** Per-message broker settings; a value the broker cannot honour fails the publish. */
  readonly options?: TOptions;
  /**
   * The delivery this message is published on behalf of, set by the runtime on a reply, a
   * `ctx.out` publish, a retry copy and a dead-lettered copy. Never written to the wire: a broker may
   * use it (a transactional publisher commits the delivery's offset with the publish; a Redis stream
   * writes a dead letter with its entry's ack, in one step), and publish middleware and observers
   * may read it (a tracer links the reply to its delivery).
   */
  readonly cause?: Delivery;
  /**
   * Set by the runtime on a retry copy and a dead-lettered copy: the message takes the place of its
   * `cause`, which is acked once this is published. A broker that cannot write it and ack the cause
   * in one step may use it to write it once: a stream file marks the copy with its origin and never
   * delivers again an original whose copy is already in the file. Never set on a reply or an out.
   */
  readonly replacesCause?: boolean;
}

/** An owned snapshot of a message: what test logs and type-erased paths pass around. */
export interface RawMessage {
  readonly name: string;
  readonly payload: Uint8Array;
  readonly headers: ReadonlyHeaderMap;
  readonly partitionKey: Uint8Array | undefined;
}

/** The broker's confirmation that it took a message. */
export interface Receipt {
  readonly name: string;
  /** The serialised position the broker stored the message at, where it says. */
  readonly position?: string;
}

/** A partition key in the form deliveries report it: bytes. */
export function partitionKeyBytes(key: Uint8Array | string): Uint8Array {
  return typeof key === "string" ? utf8Bytes(key) : key;
}

/** Copies a message into a snapshot that no later write to the original can change. */
export function snapshotMessage(message: {
  readonly name: string;
  readonly payload: Uint8Array;
  readonly headers?: ReadonlyHeaderMap | undefined;
  readonly partitionKey?: Uint8Array | string | undefined;
}): RawMessage {
  const key = message.partitionKey;
  return {
    name: message.name,
    payload: message.payload.slice(),
    headers: message.headers?.clone() ?? new HeaderMap(),
    partitionKey: key === undefined ? undefined : partitionKeyBytes(key).slice(),
  };
}

/**
 * Refuses a payload that is not bytes, before anything is sent: the first check of every broker's
 * publish (a handler's value reaches a publisher only through a codec).
 */
export function assertPayloadBytes(message: {
  readonly name: string;
  readonly payload: unknown;
}): void {
  if (!(message.payload instanceof Uint8Array)) {
    throw new RustStreamError(
      "invalid-argument",
      `the payload for "${message.name}" is not a Uint8Array: encode it first (a codec does this)`,
    );
  }
}

/**
 * A copy of a message's headers carrying its partition key (under the broker's header name) and
 * its dead-letter origin: what a broker without native slots for them writes to its wire.
 */
export function wireHeaders(
  message: Pick<OutgoingMessage<unknown>, "headers" | "partitionKey" | "deadLetterOrigin">,
  partitionKeyHeader: string = headerNames.partitionKey,
): HeaderMap {
  const headers = message.headers?.clone() ?? new HeaderMap();
  // A string key is set as text: the map holds it as its UTF-8, encoded only if a writer reads bytes.
  if (message.partitionKey !== undefined) headers.set(partitionKeyHeader, message.partitionKey);
  if (message.deadLetterOrigin !== undefined)
    writeDeadLetterOrigin(headers, message.deadLetterOrigin);
  return headers;
}
