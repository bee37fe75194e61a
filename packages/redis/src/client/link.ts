// The narrow port between the broker and a Redis server: a handful of commands, a transaction, a few
// scripts, and dedicated connections for blocking reads and Pub/Sub. The real server sits behind
// ioredis; the in-process mode puts an emulator of the same commands behind it, so every settlement
// runs the same code and answers as the server does.

import type { LinkStates } from "@ruststream/core/broker";
import type { Arg, Command, RedisBytes, Reply } from "./resp.js";
import type { RedisScript } from "./script.js";

/** A connection for blocking commands; each blocking reader owns one. */
export interface BlockingLink {
  call(name: string, args: readonly Arg[]): Promise<Reply>;
  /**
   * How many times the connection came back after a cut. The client sends a read the cut caught
   * again on its own, so only this tells a reader that a reply may have been lost on the way.
   */
  readonly reconnects: number;
  /** Makes a command blocked on this connection return as if it had timed out. */
  interrupt(): Promise<void>;
  close(): Promise<void>;
}

/** A connection in subscriber mode, receiving one channel or pattern until closed. */
export interface PubSubLink {
  close(): Promise<void>;
}

export type PubSubListener = (channel: string, payload: RedisBytes) => void;

/** What a Redis Cluster changes for the broker (see `Link.cluster`). */
export interface ClusterShape {
  /** How channels travel: sharded (`SPUBLISH`/`SSUBSCRIBE`) or classic (`PUBLISH`/`SUBSCRIBE`). */
  readonly pubsub: "sharded" | "classic";
}

export interface Link {
  /**
   * Set on a Redis Cluster, whose nodes each serve some of its hash slots: a transaction's or a
   * script's keys must share one slot (a transaction across slots is refused before it is sent),
   * the keys a descriptor derives from its key are named into that key's slot, and channels are
   * sharded unless the classic mode was chosen. Undefined on one server and behind Sentinel.
   */
  readonly cluster: ClusterShape | undefined;
  call(name: string, args: readonly Arg[]): Promise<Reply>;
  /**
   * `MULTI` ... `EXEC`: all or none; rejects with the first command's error. On a cluster, keys of
   * more than one slot are refused before anything is sent.
   */
  transaction(commands: readonly Command[]): Promise<Reply[]>;
  /** Runs `script` on `keys` (as many as it declares) and `args`, atomically. */
  script(script: RedisScript, keys: readonly string[], args: readonly Arg[]): Promise<Reply>;
  /** A connection of its own for blocking reads of `key` (on a cluster, where its slot is). */
  blocking(key: string): Promise<BlockingLink>;
  /**
   * A subscriber connection receiving `channel` (a glob when `pattern`), sharded on a cluster in
   * that mode; `listener` gets every message.
   */
  subscriber(channel: string, pattern: boolean, listener: PubSubListener): Promise<PubSubLink>;
  /** Milliseconds since the epoch, for scores that outlive the process (delayed retry, claims). */
  now(): number;
  /** Closes every connection it opened; bounded, never hangs. */
  close(): Promise<void>;
  /**
   * The state of every connection it holds to the server, as one (core's LinkStates). The
   * in-process stand-in has none: nothing lies between it and the broker.
   */
  readonly states?: LinkStates;
  /**
   * In-process only: a subscription tells the stand-in it reads `key` (as `group` of a stream, or as
   * the queue of a list with `processing`), so the stand-in counts for the test's coordinator what
   * that source holds. Answers the call that ends it. A server connection has none.
   */
  readonly joined?: (reader: Reader) => () => void;
  /**
   * In-process only: due members of the delayed-retry set `key` go back through `restore` when the
   * test's clock reaches their score, counted at that moment. A server connection has none.
   */
  readonly watchDelayed?: (key: string, restore: (member: RedisBytes) => Command) => void;
  /** In-process only: runs a command at once, for a test's synchronous inject. */
  readonly callNow?: (name: string, args: readonly Arg[]) => Reply;
}

/** What reads a key, as the in-process stand-in counts it. */
export type Reader =
  | { readonly kind: "stream"; readonly key: string; readonly group: string }
  | { readonly kind: "list"; readonly key: string; readonly processing: string };
