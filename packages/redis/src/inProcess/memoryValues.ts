import type { ClockTimer } from "@ruststream/core";
import type { Coordinator } from "@ruststream/core/broker";
import type { PubSubListener } from "../client/link.js";
import type { Command } from "../client/resp.js";

// The data the in-process stand-in keeps, shaped as Redis keeps it: streams with consumer groups and
// pending lists, lists, sorted sets; and beside the keys, what it follows for a test's coordinator
// (lists being read, delayed-retry sets) and the subscribed channels.

/** A stream entry id as two 64-bit halves. */
export interface EntryId {
  readonly ms: bigint;
  readonly seq: bigint;
}

export function compareIds(a: EntryId, b: EntryId): number {
  if (a.ms !== b.ms) return a.ms < b.ms ? -1 : 1;
  return a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0;
}

export function formatId(id: EntryId): string {
  return `${id.ms}-${id.seq}`;
}

const MAX = (1n << 64n) - 1n;

/** Parses an id as a command argument gives it: `ms-seq`, `ms` (a range bound), `-` or `+`. */
export function parseId(text: string, missingSeq: "low" | "high" = "low"): EntryId | undefined {
  if (text === "-") return { ms: 0n, seq: 0n };
  if (text === "+") return { ms: MAX, seq: MAX };
  const match = /^([0-9]+)(?:-([0-9]+))?$/.exec(text);
  if (match === null) return undefined;
  const ms = BigInt(match[1]!);
  const seq = match[2] === undefined ? (missingSeq === "low" ? 0n : MAX) : BigInt(match[2]);
  return { ms, seq };
}

export interface StreamEntry {
  readonly id: EntryId;
  readonly key: string;
  readonly fields: Buffer[];
}

export interface PendingEntry {
  consumer: string;
  deliveredAt: number;
  count: number;
}

export class StreamGroup {
  lastDelivered: EntryId;
  readonly pending = new Map<string, PendingEntry>();
  /** Subscriptions reading through this group (the stand-in counts only while there is one). */
  members = 0;
  /** Entry ids counted for the coordinator and not yet released. */
  readonly counted = new Set<string>();

  constructor(lastDelivered: EntryId) {
    this.lastDelivered = lastDelivered;
  }

  /** Counts entry `id` for the coordinator, once however often it is reached. */
  count(id: string, coordinator: Coordinator): void {
    if (this.counted.has(id)) return;
    this.counted.add(id);
    coordinator.enqueued();
  }

  /** Releases what {@link count} counted; nothing if it was not counted. */
  release(id: string, coordinator: Coordinator): void {
    if (this.counted.delete(id)) coordinator.consumed();
  }
}

export class StreamValue {
  readonly type = "stream" as const;
  readonly entries: StreamEntry[] = [];
  lastId: EntryId = { ms: 0n, seq: 0n };
  readonly groups = new Map<string, StreamGroup>();

  find(key: string): StreamEntry | undefined {
    // Entries are few in tests; a scan keeps the stand-in simple.
    return this.entries.find((e) => e.key === key);
  }
}

/** A list value; the object identity lets the stand-in follow a value from queue to processing. */
export interface ListItem {
  readonly value: Buffer;
  counted: boolean;
}

export class ListValue {
  readonly type = "list" as const;
  /** Index 0 is the left end. */
  readonly items: ListItem[] = [];
}

export class ZSetValue {
  readonly type = "zset" as const;
  /** By the member's bytes in hex. */
  readonly members = new Map<string, { member: Buffer; score: number }>();
}

export type StoredValue = StreamValue | ListValue | ZSetValue;

/** Queue key to the subscriptions reading it: while there is one, its values are counted. */
export type ListReaders = Map<string, { members: number }>;

/** Delayed-retry sets being watched: how a due member goes back, and the timer of each member. */
export interface DelayedSets {
  /** Set key to the command that puts a due member back onto its stream. */
  readonly restore: Map<string, (member: Buffer) => Command>;
  /** `key NUL member-hex` to the timer that fires when the member falls due. */
  readonly timers: Map<string, ClockTimer>;
}

/** A subscription of one connection to a channel, or to a glob pattern. */
export interface Channel {
  readonly name: string;
  readonly pattern: RegExp | undefined;
  /** Subscribed with `SSUBSCRIBE`: reached by `SPUBLISH` only, as classic ones by `PUBLISH` only. */
  readonly sharded: boolean;
  readonly listener: PubSubListener;
}
