import type { Arg, Reply } from "../client/resp.js";
import { buf, type Commands, num, ReplyError, type Server, str, valueAt } from "./command.js";
import { compareIds, type EntryId, formatId, parseId, StreamValue } from "./memoryValues.js";

// Streams without their consumer groups: appends, plain reads, ranges and trimming. Every entry a
// group with a subscription has not reached yet is counted for the coordinator, from the append on.

export function streamAt(server: Server, key: string): StreamValue | undefined {
  return valueAt(server, key, "stream");
}

/** An entry leaves the stream: released for every group that had not read it. */
function dropEntry(server: Server, stream: StreamValue, id: string): void {
  for (const group of stream.groups.values()) {
    if (!group.pending.has(id)) group.release(id, server.coordinator);
  }
}

/** `[COUNT n] [BLOCK ms] STREAMS key id` from `from` on, as `XREAD` and `XREADGROUP` take it. */
export function readArgs(
  args: readonly Arg[],
  from: number,
): { count: number; key: string; id: string } {
  let count = Number.POSITIVE_INFINITY;
  let streamsAt = -1;
  for (let i = from; i < args.length; i++) {
    const word = str(args[i]).toUpperCase();
    if (word === "COUNT") count = num(args[++i]);
    else if (word === "BLOCK") i++;
    else if (word === "STREAMS") {
      streamsAt = i;
      break;
    }
  }
  if (streamsAt < 0) throw new ReplyError("ERR syntax error");
  return { count, key: str(args[streamsAt + 1]), id: str(args[streamsAt + 2]) };
}

function xadd(server: Server, args: readonly Arg[]): Reply {
  const key = str(args[0]);
  let i = 1;
  let maxLen: number | undefined;
  if (str(args[i]).toUpperCase() === "MAXLEN") {
    i++;
    if (str(args[i]) === "~" || str(args[i]) === "=") i++;
    maxLen = num(args[i++]);
  }
  if (str(args[i]) !== "*") throw new ReplyError("ERR syntax error");
  const fields = args.slice(i + 1).map(buf);
  if (fields.length === 0 || fields.length % 2 !== 0) {
    throw new ReplyError("ERR wrong number of arguments for 'xadd' command");
  }
  let stream = streamAt(server, key);
  if (stream === undefined) {
    stream = new StreamValue();
    server.keys.set(key, stream);
  }
  const ms = BigInt(Math.max(0, Math.floor(server.clock.now())));
  const last = stream.lastId;
  const id: EntryId = ms > last.ms ? { ms, seq: 0n } : { ms: last.ms, seq: last.seq + 1n };
  stream.lastId = id;
  const text = formatId(id);
  stream.entries.push({ id, key: text, fields });
  for (const group of stream.groups.values()) {
    if (group.members > 0) group.count(text, server.coordinator);
  }
  if (maxLen !== undefined) {
    while (stream.entries.length > maxLen) dropEntry(server, stream, stream.entries.shift()!.key);
  }
  server.wake(key);
  return Buffer.from(text);
}

function xread(server: Server, args: readonly Arg[]): Reply {
  const { count, key, id } = readArgs(args, 0);
  const stream = streamAt(server, key);
  if (stream === undefined) return null;
  const after = id === "$" ? stream.lastId : (parseId(id) ?? { ms: 0n, seq: 0n });
  const out: Reply[] = [];
  for (const e of stream.entries) {
    if (out.length >= count) break;
    if (compareIds(e.id, after) > 0) out.push([Buffer.from(e.key), e.fields]);
  }
  return out.length === 0 ? null : [[Buffer.from(key), out]];
}

function xrange(server: Server, args: readonly Arg[]): Reply {
  const stream = streamAt(server, str(args[0]));
  if (stream === undefined) return [];
  const start = parseId(str(args[1]));
  const end = parseId(str(args[2]), "high");
  if (start === undefined || end === undefined) {
    throw new ReplyError("ERR Invalid stream ID specified as stream command argument");
  }
  const count = str(args[3]).toUpperCase() === "COUNT" ? num(args[4]) : Number.POSITIVE_INFINITY;
  const out: Reply[] = [];
  for (const e of stream.entries) {
    if (out.length >= count) break;
    if (compareIds(e.id, start) >= 0 && compareIds(e.id, end) <= 0) {
      out.push([Buffer.from(e.key), e.fields]);
    }
  }
  return out;
}

function xtrim(server: Server, args: readonly Arg[]): Reply {
  const stream = streamAt(server, str(args[0]));
  if (stream === undefined || str(args[1]).toUpperCase() !== "MINID") return 0;
  const min = parseId(str(args[args.length - 1])) ?? { ms: 0n, seq: 0n };
  let removed = 0;
  while (stream.entries.length > 0 && compareIds(stream.entries[0]!.id, min) < 0) {
    dropEntry(server, stream, stream.entries.shift()!.key);
    removed++;
  }
  return removed;
}

export const streamCommands: Commands = {
  XADD: xadd,
  XREAD: xread,
  XRANGE: xrange,
  XLEN: (server, args) => streamAt(server, str(args[0]))?.entries.length ?? 0,
  XTRIM: xtrim,
};
