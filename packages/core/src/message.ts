import type { DeadLetterOrigin } from "./deadLetter.js";
import { HeaderMap, type ReadonlyHeaderMap } from "./headerMap.js";

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

const encoder = new TextEncoder();

/** A partition key in the form deliveries report it: bytes. */
export function partitionKeyBytes(key: Uint8Array | string): Uint8Array {
  return typeof key === "string" ? encoder.encode(key) : key;
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
