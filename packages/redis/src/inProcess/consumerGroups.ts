import type { Arg, Reply } from "../client/resp.js";
import { type Commands, num, ok, ReplyError, type Server, str } from "./command.js";
import {
  compareIds,
  formatId,
  type PendingEntry,
  parseId,
  StreamGroup,
  StreamValue,
} from "./memoryValues.js";
import { readArgs, streamAt } from "./streams.js";

// A stream's consumer groups: creating and moving them, reads through them, their pending lists
// (acks, claims) and what a subscription reading through one counts for the coordinator.

function groupAt(
  server: Server,
  key: string,
  name: string,
): { stream: StreamValue; group: StreamGroup } {
  const stream = streamAt(server, key);
  const group = stream?.groups.get(name);
  if (stream === undefined || group === undefined) {
    throw new ReplyError(
      `NOGROUP No such key '${key}' or consumer group '${name}' in XREADGROUP with GROUP option`,
    );
  }
  return { stream, group };
}

/** The pending list in id order, as the server walks it. */
function sortedPending(group: StreamGroup): Array<[string, PendingEntry]> {
  return [...group.pending].sort((a, b) => compareIds(parseId(a[0])!, parseId(b[0])!));
}

/** Counts what follows the group's last-delivered id, while a subscription reads through it. */
function countUnread(server: Server, stream: StreamValue, group: StreamGroup): void {
  for (const e of stream.entries) {
    if (compareIds(e.id, group.lastDelivered) > 0) group.count(e.key, server.coordinator);
  }
}

function xgroup(server: Server, args: readonly Arg[]): Reply {
  const sub = str(args[0]).toUpperCase();
  const key = str(args[1]);
  const name = str(args[2]);
  if (sub === "CREATE") {
    let stream = streamAt(server, key);
    if (stream === undefined) {
      if (!args.slice(4).some((a) => str(a).toUpperCase() === "MKSTREAM")) {
        throw new ReplyError(
          "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.",
        );
      }
      stream = new StreamValue();
      server.keys.set(key, stream);
    }
    if (stream.groups.has(name)) {
      throw new ReplyError("BUSYGROUP Consumer Group name already exists");
    }
    const start = str(args[3]);
    const last = start === "$" ? stream.lastId : (parseId(start) ?? { ms: 0n, seq: 0n });
    stream.groups.set(name, new StreamGroup(last));
    return ok();
  }
  if (sub === "SETID") {
    const { stream, group } = groupAt(server, key, name);
    const to = str(args[3]);
    group.lastDelivered = to === "$" ? stream.lastId : (parseId(to) ?? group.lastDelivered);
    // What waits for the group is now what follows the new id.
    for (const id of [...group.counted]) {
      if (!group.pending.has(id)) group.release(id, server.coordinator);
    }
    if (group.members > 0) countUnread(server, stream, group);
    server.wake(key);
    return ok();
  }
  if (sub === "DELCONSUMER") {
    const { group } = groupAt(server, key, name);
    const consumer = str(args[3]);
    let removed = 0;
    for (const [id, p] of [...group.pending]) {
      if (p.consumer !== consumer) continue;
      group.pending.delete(id);
      group.release(id, server.coordinator);
      removed++;
    }
    return removed;
  }
  throw new ReplyError(`ERR unknown subcommand '${sub}'`);
}

function xreadgroup(server: Server, args: readonly Arg[]): Reply {
  if (str(args[0]).toUpperCase() !== "GROUP") throw new ReplyError("ERR syntax error");
  const groupName = str(args[1]);
  const consumer = str(args[2]);
  const { count, key, id } = readArgs(args, 3);
  const { stream, group } = groupAt(server, key, groupName);
  const now = server.clock.now();
  const out: Reply[] = [];
  if (id === ">") {
    for (const e of stream.entries) {
      if (out.length >= count) break;
      if (compareIds(e.id, group.lastDelivered) <= 0) continue;
      group.lastDelivered = e.id;
      const pending = group.pending.get(e.key);
      if (pending === undefined) group.pending.set(e.key, { consumer, deliveredAt: now, count: 1 });
      else Object.assign(pending, { consumer, deliveredAt: now, count: pending.count + 1 });
      out.push([Buffer.from(e.key), e.fields]);
    }
    return out.length === 0 ? null : [[Buffer.from(key), out]];
  }
  // The consumer's own pending entries after `id`.
  const after = parseId(id) ?? { ms: 0n, seq: 0n };
  for (const [pid, p] of sortedPending(group)) {
    if (out.length >= count) break;
    if (p.consumer !== consumer || compareIds(parseId(pid)!, after) <= 0) continue;
    const entry = stream.find(pid);
    p.count++;
    p.deliveredAt = now;
    out.push([Buffer.from(pid), entry === undefined ? null : entry.fields]);
  }
  return [[Buffer.from(key), out]];
}

function xack(server: Server, args: readonly Arg[]): Reply {
  const stream = streamAt(server, str(args[0]));
  const group = stream?.groups.get(str(args[1]));
  if (group === undefined) return 0;
  let acked = 0;
  for (const a of args.slice(2)) {
    const id = str(a);
    if (!group.pending.delete(id)) continue;
    group.release(id, server.coordinator);
    acked++;
  }
  return acked;
}

function xautoclaim(server: Server, args: readonly Arg[]): Reply {
  const key = str(args[0]);
  const { stream, group } = groupAt(server, key, str(args[1]));
  const consumer = str(args[2]);
  const minIdle = num(args[3]);
  const start = parseId(str(args[4])) ?? { ms: 0n, seq: 0n };
  const count = str(args[5]).toUpperCase() === "COUNT" ? num(args[6]) : 100;
  const now = server.clock.now();
  const claimed: Reply[] = [];
  const deleted: Reply[] = [];
  let next = "0-0";
  for (const [id, p] of sortedPending(group)) {
    if (compareIds(parseId(id)!, start) < 0) continue;
    if (claimed.length >= count) {
      next = id;
      break;
    }
    if (now - p.deliveredAt < minIdle) continue;
    const entry = stream.find(id);
    if (entry === undefined) {
      group.pending.delete(id);
      group.release(id, server.coordinator);
      deleted.push(Buffer.from(id));
      continue;
    }
    Object.assign(p, { consumer, deliveredAt: now, count: p.count + 1 });
    claimed.push([Buffer.from(id), entry.fields]);
  }
  return [Buffer.from(next), claimed, deleted];
}

function xpending(server: Server, args: readonly Arg[]): Reply {
  const { group } = groupAt(server, str(args[0]), str(args[1]));
  const now = server.clock.now();
  if (args.length < 5) {
    return [group.pending.size, null, null, null];
  }
  const start = parseId(str(args[2]))!;
  const end = parseId(str(args[3]), "high")!;
  const count = num(args[4]);
  const consumer = args[5] === undefined ? undefined : str(args[5]);
  const out: Reply[] = [];
  for (const [id, p] of sortedPending(group)) {
    if (out.length >= count) break;
    const parsed = parseId(id)!;
    if (compareIds(parsed, start) < 0 || compareIds(parsed, end) > 0) continue;
    if (consumer !== undefined && p.consumer !== consumer) continue;
    out.push([Buffer.from(id), Buffer.from(p.consumer), Math.floor(now - p.deliveredAt), p.count]);
  }
  return out;
}

/**
 * `XINFO GROUPS key`: each group's name, pending count, last delivered id and lag (the entries after
 * that id). The stand-in always counts its lag; the server answers null where a delete, a trim or
 * an `XGROUP SETID` left it unable to.
 */
function xinfo(server: Server, args: readonly Arg[]): Reply {
  const sub = str(args[0]).toUpperCase();
  if (sub !== "GROUPS") throw new ReplyError(`ERR unknown subcommand '${sub}'`);
  const stream = streamAt(server, str(args[1]));
  if (stream === undefined) throw new ReplyError("ERR no such key");
  return [...stream.groups].map(([name, group]): Reply => {
    const lag = stream.entries.filter((e) => compareIds(e.id, group.lastDelivered) > 0).length;
    return [
      Buffer.from("name"),
      Buffer.from(name),
      Buffer.from("pending"),
      group.pending.size,
      Buffer.from("last-delivered-id"),
      Buffer.from(formatId(group.lastDelivered)),
      Buffer.from("lag"),
      lag,
    ];
  });
}

export const consumerGroupCommands: Commands = {
  XINFO: xinfo,
  XGROUP: xgroup,
  XREADGROUP: xreadgroup,
  XACK: xack,
  XAUTOCLAIM: xautoclaim,
  XPENDING: xpending,
};

/**
 * A subscription starts reading `key` through `groupName`: the first one counts what the group holds
 * (pending and unread). Answers the call that ends it.
 */
export function joinGroup(server: Server, key: string, groupName: string): () => void {
  const group = streamAt(server, key)?.groups.get(groupName);
  const stream = streamAt(server, key);
  if (group === undefined || stream === undefined) return () => {};
  if (group.members++ === 0) {
    for (const id of group.pending.keys()) group.count(id, server.coordinator);
    countUnread(server, stream, group);
  }
  let left = false;
  return () => {
    if (left) return;
    left = true;
    if (--group.members > 0) return;
    // Entries no one has read have no consumer any more; read ones stay counted until acked.
    for (const id of [...group.counted]) {
      if (!group.pending.has(id)) group.release(id, server.coordinator);
    }
  };
}
