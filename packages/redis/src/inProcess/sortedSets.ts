import type { Arg, Command, Reply } from "../client/resp.js";
import { buf, type Commands, num, type Server, str, valueAt } from "./command.js";
import { ZSetValue } from "./memoryValues.js";

// Sorted sets (delayed retries, list claims), and the stand-in's own sweeper of delayed-retry sets:
// a watched set's member goes back onto its stream at the moment the test's clock reaches its score,
// so the coordinator counts it again exactly then.

function zsetAt(server: Server, key: string): ZSetValue | undefined {
  return valueAt(server, key, "zset");
}

const timerId = (key: string, hex: string): string => `${key}\u0000${hex}`;

function zadd(server: Server, args: readonly Arg[]): Reply {
  const key = str(args[0]);
  let zset = zsetAt(server, key);
  if (zset === undefined) {
    zset = new ZSetValue();
    server.keys.set(key, zset);
  }
  let added = 0;
  for (let i = 1; i + 1 < args.length; i += 2) {
    const score = num(args[i]);
    const member = buf(args[i + 1]!);
    const hex = member.toString("hex");
    if (!zset.members.has(hex)) added++;
    zset.members.set(hex, { member, score });
    if (server.delayed.restore.has(key)) arm(server, key, hex, score);
  }
  return added;
}

/**
 * A score range as the server reads `min` and `max`: `-inf`, `+inf`, a number, or a number after
 * `(` for an exclusive bound.
 */
function scoreRange(min: Arg | undefined, max: Arg | undefined): (score: number) => boolean {
  const bound = (a: Arg | undefined) => {
    const s = str(a);
    const open = s.startsWith("(");
    const n = open ? s.slice(1) : s;
    const value =
      n === "-inf" ? Number.NEGATIVE_INFINITY : n === "+inf" ? Number.POSITIVE_INFINITY : num(n);
    return { value, open };
  };
  const low = bound(min);
  const high = bound(max);
  return (score) =>
    (low.open ? score > low.value : score >= low.value) &&
    (high.open ? score < high.value : score <= high.value);
}

function zrangebyscore(server: Server, args: readonly Arg[]): Reply {
  const zset = zsetAt(server, str(args[0]));
  if (zset === undefined) return [];
  const inRange = scoreRange(args[1], args[2]);
  let offset = 0;
  let limit = Number.POSITIVE_INFINITY;
  if (str(args[3]).toUpperCase() === "LIMIT") {
    offset = num(args[4]);
    limit = num(args[5]);
  }
  return [...zset.members.values()]
    .filter((m) => inRange(m.score))
    .sort((a, b) => a.score - b.score || Buffer.compare(a.member, b.member))
    .slice(offset, offset + limit)
    .map((m) => m.member);
}

function zrem(server: Server, args: readonly Arg[]): Reply {
  const key = str(args[0]);
  const zset = zsetAt(server, key);
  if (zset === undefined) return 0;
  let removed = 0;
  for (const a of args.slice(1)) {
    const hex = buf(a).toString("hex");
    if (zset.members.delete(hex)) removed++;
    const id = timerId(key, hex);
    server.delayed.timers.get(id)?.cancel();
    server.delayed.timers.delete(id);
  }
  return removed;
}

export const sortedSetCommands: Commands = {
  ZADD: zadd,
  ZRANGEBYSCORE: zrangebyscore,
  ZREM: zrem,
  ZCARD: (server, args) => zsetAt(server, str(args[0]))?.members.size ?? 0,
  ZCOUNT: (server, args) => {
    const inRange = scoreRange(args[1], args[2]);
    let count = 0;
    for (const m of zsetAt(server, str(args[0]))?.members.values() ?? []) {
      if (inRange(m.score)) count++;
    }
    return count;
  },
  // The score as the server writes it (a bulk string), or nil.
  ZSCORE: (server, args) => {
    const found = zsetAt(server, str(args[0]))?.members.get(buf(args[1] ?? "").toString("hex"));
    return found === undefined ? null : Buffer.from(String(found.score));
  },
};

/** From now on, due members of `key` go back through `restore`, those already in it included. */
export function watchDelayed(
  server: Server,
  key: string,
  restore: (member: Buffer) => Command,
): void {
  server.delayed.restore.set(key, restore);
  const zset = server.keys.get(key);
  if (zset?.type === "zset") {
    for (const [hex, m] of zset.members) arm(server, key, hex, m.score);
  }
}

// A sweeper on the server side of the in-process mode: it moves the member itself when due.
function arm(server: Server, key: string, hex: string, score: number): void {
  const id = timerId(key, hex);
  const timers = server.delayed.timers;
  timers.get(id)?.cancel();
  const timer = server.clock.setTimer(score - server.clock.now(), () => {
    timers.delete(id);
    const zset = server.keys.get(key);
    const entry = zset?.type === "zset" ? zset.members.get(hex) : undefined;
    const restore = server.delayed.restore.get(key);
    if (entry === undefined || restore === undefined || zset?.type !== "zset") return;
    zset.members.delete(hex);
    const command = restore(entry.member);
    server.execute(command.name, command.args);
  });
  timers.set(id, timer);
}
