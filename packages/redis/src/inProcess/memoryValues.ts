// The data the in-process stand-in keeps, shaped as Redis keeps it: streams with consumer groups and
// pending lists, lists, sorted sets.

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
