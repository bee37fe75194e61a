import type { Coordinator } from "@ruststream/core/broker";
import type { Arg, Reply } from "../client/resp.js";
import { buf, type Commands, num, type Server, str, valueAt } from "./command.js";
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

export const listCommands: Commands = {
  LPUSH: (server, args) => push(server, args, true),
  RPUSH: (server, args) => push(server, args, false),
  // The blocking form answers as the plain one; the blocking connection waits when it answers nil.
  LMOVE: lmove,
  BLMOVE: lmove,
  LREM: lrem,
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
