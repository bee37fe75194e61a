import type { Clock } from "@ruststream/core";
import type { Coordinator } from "@ruststream/core/broker";
import type { Arg, Reply } from "../client/resp.js";
import type { Channel, DelayedSets, ListReaders, StoredValue } from "./memoryValues.js";

// What a command of the in-process stand-in is: a handler over the server's state, registered by
// name in the one command table (memoryRedis.ts). Each data type's file contributes its handlers;
// this file holds what they share, so none of them imports another type's file or the server.

/** An error reply, as the server sends it: the message starts with its code (`WRONGTYPE`, `ERR`). */
export class ReplyError extends Error {}

/** What a command handler reaches of the server: its keys and the state beside them. */
export interface Server {
  readonly clock: Clock;
  readonly coordinator: Coordinator;
  readonly keys: Map<string, StoredValue>;
  /** Lists a subscription reads, so what they hold is counted for the coordinator. */
  readonly listReaders: ListReaders;
  /** Delayed-retry sets the stand-in empties itself when the test's clock reaches a member. */
  readonly delayed: DelayedSets;
  /** Subscribed channels and patterns, of every connection. */
  readonly channels: Set<Channel>;
  /** Retries the blocked commands waiting on `key`, after a write to it. */
  wake(key: string): void;
  /** Runs one command through the table (a due delayed member goes back through it). */
  execute(name: string, args: readonly Arg[]): Reply;
}

/** Runs one command on `server`; throws a {@link ReplyError} where the server answers an error. */
export type Handler = (server: Server, args: readonly Arg[]) => Reply;

/** A data type's part of the command table: upper-case command name to handler. */
export type Commands = Readonly<Record<string, Handler>>;

/** The value at `key` if it is of `type`; `WRONGTYPE` if it is another, as the server answers. */
export function valueAt<T extends StoredValue["type"]>(
  server: Server,
  key: string,
  type: T,
): Extract<StoredValue, { type: T }> | undefined {
  const value = server.keys.get(key);
  if (value === undefined) return undefined;
  if (value.type !== type) {
    throw new ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value");
  }
  return value as Extract<StoredValue, { type: T }>;
}

export const str = (a: Arg | undefined): string =>
  a === undefined ? "" : Buffer.isBuffer(a) ? a.toString("utf8") : String(a);

// A copy: the caller may reuse the buffer it passed once the command returns.
export const buf = (a: Arg): Buffer =>
  Buffer.isBuffer(a) ? Buffer.from(a) : Buffer.from(String(a));

export const num = (a: Arg | undefined): number => {
  const n = Number(str(a));
  if (!Number.isFinite(n)) throw new ReplyError("ERR value is not an integer or out of range");
  return n;
};

export const ok = (): Buffer => Buffer.from("OK");
