import type { Coordinator } from "@ruststream/core/broker";
import type { Arg, Reply } from "../client/resp.js";
import { buf, type Commands, num, ReplyError, type Server, str, valueAt } from "./command.js";
import { type ListItem, ListValue } from "./memoryValues.js";

// Lists: pushes, moves (blocking or not: blocking is the connection's part, in blockingLink.ts),
// removals. A value is counted for the coordinator from when a subscription reads its queue until
// it is removed, wherever it moves in between (queue, processing, queue again).

function listAt(server: Server, key: string): ListValue | undefined {
  return valueAt(server, key, "list");
}

function countItem(item: ListItem, coordinator: Coordinator): void {
  if (item.counted) return;
  item.counted = true;
  coordinator.enqueued();
}

function push(server: Server, args: readonly Arg[], left: boolean): Reply {
  const key = str(args[0]);
  let list = listAt(server, key);
  if (list === undefined) {
    list = new ListValue();
    server.keys.set(key, list);
  }
  const reading = (server.listReaders.get(key)?.members ?? 0) > 0;
  for (const v of args.slice(1)) {
    const item: ListItem = { value: buf(v), counted: false };
    if (reading) countItem(item, server.coordinator);
    if (left) list.items.unshift(item);
    else list.items.push(item);
  }
  server.wake(key);
  return list.items.length;
}

function lmove(server: Server, args: readonly Arg[]): Reply {
  const source = listAt(server, str(args[0]));
  const destinationKey = str(args[1]);
  let destination = listAt(server, destinationKey);
  const from = str(args[2]).toUpperCase();
  const to = str(args[3]).toUpperCase();
  if (source === undefined || source.items.length === 0) return null;
  const item = from === "RIGHT" ? source.items.pop()! : source.items.shift()!;
  if (destination === undefined) {
    destination = new ListValue();
    server.keys.set(destinationKey, destination);
  }
  if (to === "LEFT") destination.items.unshift(item);
  else destination.items.push(item);
  server.wake(destinationKey);
  return item.value;
}

function lrem(server: Server, args: readonly Arg[]): Reply {
  const list = listAt(server, str(args[0]));
  if (list === undefined) return 0;
  let remaining = num(args[1]) === 0 ? Number.POSITIVE_INFINITY : Math.abs(num(args[1]));
  const value = buf(args[2] ?? "");
  let removed = 0;
  for (let i = 0; i < list.items.length && remaining > 0; ) {
    const item = list.items[i]!;
    if (item.value.equals(value)) {
      list.items.splice(i, 1);
      if (item.counted) {
        item.counted = false;
        server.coordinator.consumed();
      }
      removed++;
      remaining--;
    } else {
      i++;
    }
  }
  return removed;
}

/** `LPOS key element`: the first index of `element`, or nil. The stand-in takes no options. */
function lpos(server: Server, args: readonly Arg[]): Reply {
  if (args.length !== 2) {
    throw new ReplyError(
      "ERR the in-process Redis answers LPOS key element only (no RANK, COUNT or MAXLEN)",
    );
  }
  const list = listAt(server, str(args[0]));
  if (list === undefined) return null;
  const value = buf(args[1]!);
  const index = list.items.findIndex((item) => item.value.equals(value));
  return index === -1 ? null : index;
}

/** `LRANGE key start stop`, negative indexes counted from the end, as the server reads them. */
function lrange(server: Server, args: readonly Arg[]): Reply {
  const items = listAt(server, str(args[0]))?.items ?? [];
  const at = (arg: Arg | undefined) => {
    const n = num(arg);
    return n < 0 ? items.length + n : n;
  };
  const start = Math.max(0, at(args[1]));
  const stop = Math.min(items.length - 1, at(args[2]));
  return items.slice(start, stop + 1).map((item) => item.value);
}

export const listCommands: Commands = {
  LPUSH: (server, args) => push(server, args, true),
  RPUSH: (server, args) => push(server, args, false),
  // The blocking form answers as the plain one; the blocking connection waits when it answers nil.
  LMOVE: lmove,
  BLMOVE: lmove,
  LREM: lrem,
  LPOS: lpos,
  LRANGE: lrange,
  LLEN: (server, args) => listAt(server, str(args[0]))?.items.length ?? 0,
};

/**
 * A subscription starts reading the queue `key`: the first one counts what the queue holds. Answers
 * the call that ends it; the last one to leave releases what is still in the queue.
 */
export function joinList(server: Server, key: string): () => void {
  let readers = server.listReaders.get(key);
  if (readers === undefined) {
    readers = { members: 0 };
    server.listReaders.set(key, readers);
  }
  const q = readers;
  if (q.members++ === 0) {
    for (const item of listAt(server, key)?.items ?? []) countItem(item, server.coordinator);
  }
  let left = false;
  return () => {
    if (left) return;
    left = true;
    if (--q.members > 0) return;
    for (const item of listAt(server, key)?.items ?? []) {
      if (!item.counted) continue;
      item.counted = false;
      server.coordinator.consumed();
    }
  };
}
