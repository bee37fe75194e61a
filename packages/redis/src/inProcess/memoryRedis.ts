import { type Clock, type ClockTimer, systemClock } from "@ruststream/core";
import { type Coordinator, noCoordinator } from "@ruststream/core/broker";
import type { BlockingLink, Link, PubSubLink, PubSubListener, Reader } from "../client/link.js";
import type { Arg, Command, Reply } from "../client/resp.js";
import { scriptKeys } from "../client/script.js";
import {
  compareIds,
  type EntryId,
  formatId,
  type ListItem,
  ListValue,
  parseId,
  type StoredValue,
  StreamGroup,
  StreamValue,
  ZSetValue,
} from "./memoryValues.js";

// An in-process stand-in of the Redis commands this package sends, with the server's answers and
// errors (RESP2 shapes). The broker's own code runs unchanged on top of it, so the in-process mode
// settles exactly as the server does. It also counts, for a test's coordinator, what each source
// holds: entries a group has not acked, values a reliable list has not removed, messages published
// to a subscribed channel until the subscriber is done with them.

class ReplyError extends Error {}

const wrongType = () =>
  new ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value");

const str = (a: Arg | undefined): string =>
  a === undefined ? "" : Buffer.isBuffer(a) ? a.toString("utf8") : String(a);
const buf = (a: Arg): Buffer => (Buffer.isBuffer(a) ? Buffer.from(a) : Buffer.from(String(a)));
const num = (a: Arg | undefined): number => {
  const n = Number(str(a));
  if (!Number.isFinite(n)) throw new ReplyError("ERR value is not an integer or out of range");
  return n;
};
const ok = () => Buffer.from("OK");

function globToRegExp(glob: string): RegExp {
  let source = "";
  for (const ch of glob) {
    if (ch === "*") source += ".*";
    else if (ch === "?") source += ".";
    else source += ch.replace(/[.+^${}()|\\[\]]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

interface Waiter {
  /** Tries again after a write to the key; true once it has answered. */
  attempt(): boolean;
}

interface Channel {
  readonly name: string;
  readonly pattern: RegExp | undefined;
  readonly listener: PubSubListener;
}

/** The in-process server: one per {@link RedisBroker} object, shared by its connections. */
export class MemoryRedis {
  #clock: Clock = systemClock;
  #coordinator: Coordinator = noCoordinator;
  readonly #keys = new Map<string, StoredValue>();
  readonly #waiters = new Map<string, Set<Waiter>>();
  readonly #channels = new Set<Channel>();
  /** Reliable lists with readers: queue key -> readers and processing key. */
  readonly #queues = new Map<string, { members: number; processing: string }>();
  readonly #processing = new Map<string, string>();
  readonly #delayed = new Map<string, (member: Buffer) => Command>();
  readonly #timers = new Map<string, ClockTimer>();

  attach(clock: Clock, coordinator: Coordinator): void {
    this.#clock = clock;
    this.#coordinator = coordinator;
  }

  link(): Link {
    const blockers = new Set<MemoryBlockingLink>();
    const subscribers = new Set<Channel>();
    return {
      call: async (name, args) => this.execute(name, args),
      transaction: async (commands) => this.#transaction(commands),
      // One synchronous run through the command table: nothing interleaves, as with a script.
      script: async (script, keys, args) =>
        script.run(
          (name, commandArgs) => this.execute(name, commandArgs),
          scriptKeys(script, keys),
          args,
        ),
      blocking: async () => {
        const link = new MemoryBlockingLink(this);
        blockers.add(link);
        return link;
      },
      pubsub: async (listener) => this.#pubsubLink(listener, subscribers),
      now: () => this.#clock.now(),
      close: async () => {
        for (const b of blockers) await b.close();
        for (const c of subscribers) this.#channels.delete(c);
      },
      joined: (reader) => this.#join(reader),
      watchDelayed: (key, restore) => this.#watchDelayed(key, restore),
      callNow: (name, args) => this.execute(name, args),
    };
  }

  /** Runs one command at once. Throws the server's error reply. */
  execute(name: string, args: readonly Arg[]): Reply {
    switch (name.toUpperCase()) {
      case "XADD":
        return this.#xadd(args);
      case "XGROUP":
        return this.#xgroup(args);
      case "XREADGROUP":
        return this.#xreadgroup(args);
      case "XREAD":
        return this.#xread(args);
      case "XACK":
        return this.#xack(args);
      case "XAUTOCLAIM":
        return this.#xautoclaim(args);
      case "XPENDING":
        return this.#xpending(args);
      case "XRANGE":
        return this.#xrange(args);
      case "XLEN":
        return this.#stream(str(args[0]))?.entries.length ?? 0;
      case "XTRIM":
        return this.#xtrim(args);
      case "ZADD":
        return this.#zadd(args);
      case "ZRANGEBYSCORE":
        return this.#zrangebyscore(args);
      case "ZREM":
        return this.#zrem(args);
      case "ZCARD":
        return this.#zset(str(args[0]))?.members.size ?? 0;
      case "PEXPIRE":
        return this.#keys.has(str(args[0])) ? 1 : 0;
      case "DEL":
        return args.filter((k) => this.#keys.delete(str(k))).length;
      case "LPUSH":
      case "RPUSH":
        return this.#push(str(args[0]), args.slice(1), name.toUpperCase() === "LPUSH");
      case "BLMOVE":
      case "LMOVE":
        return this.#lmove(args);
      case "LREM":
        return this.#lrem(args);
      case "LLEN":
        return this.#list(str(args[0]))?.items.length ?? 0;
      case "PUBLISH":
        return this.#publish(str(args[0]), buf(args[1] ?? ""));
      case "INFO":
        return Buffer.from("# Server\r\nredis_version:in-process\r\n");
      case "CLIENT":
        return ok();
      default:
        throw new ReplyError(`ERR unknown command '${name}'`);
    }
  }

  /** Registers a waiter on `key`, woken by every write to it. */
  wait(key: string, waiter: Waiter): () => void {
    let set = this.#waiters.get(key);
    if (set === undefined) {
      set = new Set();
      this.#waiters.set(key, set);
    }
    set.add(waiter);
    return () => set.delete(waiter);
  }

  get clock(): Clock {
    return this.#clock;
  }

  #wake(key: string): void {
    const set = this.#waiters.get(key);
    if (set === undefined) return;
    for (const waiter of [...set]) if (waiter.attempt()) set.delete(waiter);
  }

  #transaction(commands: readonly Command[]): Reply[] {
    // One synchronous run: nothing else interleaves, as inside MULTI/EXEC. Like the server, a failing
    // command does not undo the others; the first error is reported.
    const replies: Reply[] = [];
    let failure: unknown;
    for (const c of commands) {
      try {
        replies.push(this.execute(c.name, c.args));
      } catch (error) {
        failure ??= error;
        replies.push(null);
      }
    }
    if (failure !== undefined) throw failure;
    return replies;
  }

  // Keys

  #stream(key: string): StreamValue | undefined {
    const value = this.#keys.get(key);
    if (value === undefined) return undefined;
    if (value.type !== "stream") throw wrongType();
    return value;
  }
  #list(key: string): ListValue | undefined {
    const value = this.#keys.get(key);
    if (value === undefined) return undefined;
    if (value.type !== "list") throw wrongType();
    return value;
  }
  #zset(key: string): ZSetValue | undefined {
    const value = this.#keys.get(key);
    if (value === undefined) return undefined;
    if (value.type !== "zset") throw wrongType();
    return value;
  }

  #group(key: string, name: string): { stream: StreamValue; group: StreamGroup } {
    const stream = this.#stream(key);
    const group = stream?.groups.get(name);
    if (stream === undefined || group === undefined) {
      throw new ReplyError(
        `NOGROUP No such key '${key}' or consumer group '${name}' in XREADGROUP with GROUP option`,
      );
    }
    return { stream, group };
  }

  // Streams

  #xadd(args: readonly Arg[]): Reply {
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
    let stream = this.#stream(key);
    if (stream === undefined) {
      stream = new StreamValue();
      this.#keys.set(key, stream);
    }
    const ms = BigInt(Math.max(0, Math.floor(this.#clock.now())));
    const last = stream.lastId;
    const id: EntryId = ms > last.ms ? { ms, seq: 0n } : { ms: last.ms, seq: last.seq + 1n };
    stream.lastId = id;
    const text = formatId(id);
    stream.entries.push({ id, key: text, fields });
    for (const group of stream.groups.values()) {
      if (group.members > 0) this.#count(group, text);
    }
    if (maxLen !== undefined) {
      while (stream.entries.length > maxLen) this.#dropEntry(stream, stream.entries.shift()!.key);
    }
    this.#wake(key);
    return Buffer.from(text);
  }

  #dropEntry(stream: StreamValue, id: string): void {
    for (const group of stream.groups.values()) {
      if (!group.pending.has(id)) this.#release(group, id);
    }
  }

  #xgroup(args: readonly Arg[]): Reply {
    const sub = str(args[0]).toUpperCase();
    const key = str(args[1]);
    const name = str(args[2]);
    if (sub === "CREATE") {
      let stream = this.#stream(key);
      if (stream === undefined) {
        if (!args.slice(4).some((a) => str(a).toUpperCase() === "MKSTREAM")) {
          throw new ReplyError(
            "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.",
          );
        }
        stream = new StreamValue();
        this.#keys.set(key, stream);
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
      const { stream, group } = this.#group(key, name);
      const to = str(args[3]);
      group.lastDelivered = to === "$" ? stream.lastId : (parseId(to) ?? group.lastDelivered);
      // What waits for the group is now what follows the new id.
      for (const id of [...group.counted]) if (!group.pending.has(id)) this.#release(group, id);
      if (group.members > 0) {
        for (const e of stream.entries) {
          if (compareIds(e.id, group.lastDelivered) > 0) this.#count(group, e.key);
        }
      }
      this.#wake(key);
      return ok();
    }
    if (sub === "DELCONSUMER") {
      const { group } = this.#group(key, name);
      const consumer = str(args[3]);
      let removed = 0;
      for (const [id, p] of [...group.pending]) {
        if (p.consumer !== consumer) continue;
        group.pending.delete(id);
        this.#release(group, id);
        removed++;
      }
      return removed;
    }
    throw new ReplyError(`ERR unknown subcommand '${sub}'`);
  }

  #readArgs(args: readonly Arg[], from: number) {
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

  #xreadgroup(args: readonly Arg[]): Reply {
    if (str(args[0]).toUpperCase() !== "GROUP") throw new ReplyError("ERR syntax error");
    const groupName = str(args[1]);
    const consumer = str(args[2]);
    const { count, key, id } = this.#readArgs(args, 3);
    const { stream, group } = this.#group(key, groupName);
    const now = this.#clock.now();
    const out: Reply[] = [];
    if (id === ">") {
      for (const e of stream.entries) {
        if (out.length >= count) break;
        if (compareIds(e.id, group.lastDelivered) <= 0) continue;
        group.lastDelivered = e.id;
        const pending = group.pending.get(e.key);
        if (pending === undefined)
          group.pending.set(e.key, { consumer, deliveredAt: now, count: 1 });
        else Object.assign(pending, { consumer, deliveredAt: now, count: pending.count + 1 });
        out.push([Buffer.from(e.key), e.fields]);
      }
      return out.length === 0 ? null : [[Buffer.from(key), out]];
    }
    // The consumer's own pending entries after `id`.
    const after = parseId(id) ?? { ms: 0n, seq: 0n };
    for (const [pid, p] of this.#sortedPending(group)) {
      if (out.length >= count) break;
      if (p.consumer !== consumer || compareIds(parseId(pid)!, after) <= 0) continue;
      const entry = stream.find(pid);
      p.count++;
      p.deliveredAt = now;
      out.push([Buffer.from(pid), entry === undefined ? null : entry.fields]);
    }
    return [[Buffer.from(key), out]];
  }

  #xread(args: readonly Arg[]): Reply {
    const { count, key, id } = this.#readArgs(args, 0);
    const stream = this.#stream(key);
    if (stream === undefined) return null;
    const after = id === "$" ? stream.lastId : (parseId(id) ?? { ms: 0n, seq: 0n });
    const out: Reply[] = [];
    for (const e of stream.entries) {
      if (out.length >= count) break;
      if (compareIds(e.id, after) > 0) out.push([Buffer.from(e.key), e.fields]);
    }
    return out.length === 0 ? null : [[Buffer.from(key), out]];
  }

  #xack(args: readonly Arg[]): Reply {
    const stream = this.#stream(str(args[0]));
    const group = stream?.groups.get(str(args[1]));
    if (group === undefined) return 0;
    let acked = 0;
    for (const a of args.slice(2)) {
      const id = str(a);
      if (!group.pending.delete(id)) continue;
      this.#release(group, id);
      acked++;
    }
    return acked;
  }

  #sortedPending(
    group: StreamGroup,
  ): Array<[string, StreamGroup["pending"] extends Map<string, infer P> ? P : never]> {
    return [...group.pending].sort((a, b) => compareIds(parseId(a[0])!, parseId(b[0])!));
  }

  #xautoclaim(args: readonly Arg[]): Reply {
    const key = str(args[0]);
    const { stream, group } = this.#group(key, str(args[1]));
    const consumer = str(args[2]);
    const minIdle = num(args[3]);
    const start = parseId(str(args[4])) ?? { ms: 0n, seq: 0n };
    const count = str(args[5]).toUpperCase() === "COUNT" ? num(args[6]) : 100;
    const now = this.#clock.now();
    const claimed: Reply[] = [];
    const deleted: Reply[] = [];
    let next = "0-0";
    for (const [id, p] of this.#sortedPending(group)) {
      if (compareIds(parseId(id)!, start) < 0) continue;
      if (claimed.length >= count) {
        next = id;
        break;
      }
      if (now - p.deliveredAt < minIdle) continue;
      const entry = stream.find(id);
      if (entry === undefined) {
        group.pending.delete(id);
        this.#release(group, id);
        deleted.push(Buffer.from(id));
        continue;
      }
      Object.assign(p, { consumer, deliveredAt: now, count: p.count + 1 });
      claimed.push([Buffer.from(id), entry.fields]);
    }
    return [Buffer.from(next), claimed, deleted];
  }

  #xpending(args: readonly Arg[]): Reply {
    const { group } = this.#group(str(args[0]), str(args[1]));
    const now = this.#clock.now();
    if (args.length < 5) {
      return [group.pending.size, null, null, null];
    }
    const start = parseId(str(args[2]))!;
    const end = parseId(str(args[3]), "high")!;
    const count = num(args[4]);
    const consumer = args[5] === undefined ? undefined : str(args[5]);
    const out: Reply[] = [];
    for (const [id, p] of this.#sortedPending(group)) {
      if (out.length >= count) break;
      const parsed = parseId(id)!;
      if (compareIds(parsed, start) < 0 || compareIds(parsed, end) > 0) continue;
      if (consumer !== undefined && p.consumer !== consumer) continue;
      out.push([
        Buffer.from(id),
        Buffer.from(p.consumer),
        Math.floor(now - p.deliveredAt),
        p.count,
      ]);
    }
    return out;
  }

  #xrange(args: readonly Arg[]): Reply {
    const stream = this.#stream(str(args[0]));
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

  #xtrim(args: readonly Arg[]): Reply {
    const stream = this.#stream(str(args[0]));
    if (stream === undefined || str(args[1]).toUpperCase() !== "MINID") return 0;
    const min = parseId(str(args[args.length - 1])) ?? { ms: 0n, seq: 0n };
    let removed = 0;
    while (stream.entries.length > 0 && compareIds(stream.entries[0]!.id, min) < 0) {
      this.#dropEntry(stream, stream.entries.shift()!.key);
      removed++;
    }
    return removed;
  }

  // Sorted sets

  #zadd(args: readonly Arg[]): Reply {
    const key = str(args[0]);
    let zset = this.#zset(key);
    if (zset === undefined) {
      zset = new ZSetValue();
      this.#keys.set(key, zset);
    }
    let added = 0;
    for (let i = 1; i + 1 < args.length; i += 2) {
      const score = num(args[i]);
      const member = buf(args[i + 1]!);
      const hex = member.toString("hex");
      if (!zset.members.has(hex)) added++;
      zset.members.set(hex, { member, score });
      if (this.#delayed.has(key)) this.#arm(key, hex, score);
    }
    return added;
  }

  #zrangebyscore(args: readonly Arg[]): Reply {
    const zset = this.#zset(str(args[0]));
    if (zset === undefined) return [];
    const bound = (a: Arg | undefined) => {
      const s = str(a);
      return s === "-inf"
        ? Number.NEGATIVE_INFINITY
        : s === "+inf"
          ? Number.POSITIVE_INFINITY
          : num(a);
    };
    const min = bound(args[1]);
    const max = bound(args[2]);
    let offset = 0;
    let limit = Number.POSITIVE_INFINITY;
    if (str(args[3]).toUpperCase() === "LIMIT") {
      offset = num(args[4]);
      limit = num(args[5]);
    }
    return [...zset.members.values()]
      .filter((m) => m.score >= min && m.score <= max)
      .sort((a, b) => a.score - b.score || Buffer.compare(a.member, b.member))
      .slice(offset, offset + limit)
      .map((m) => m.member);
  }

  #zrem(args: readonly Arg[]): Reply {
    const key = str(args[0]);
    const zset = this.#zset(key);
    if (zset === undefined) return 0;
    let removed = 0;
    for (const a of args.slice(1)) {
      const hex = buf(a).toString("hex");
      if (zset.members.delete(hex)) removed++;
      this.#timers.get(`${key}\u0000${hex}`)?.cancel();
      this.#timers.delete(`${key}\u0000${hex}`);
    }
    return removed;
  }

  #watchDelayed(key: string, restore: (member: Buffer) => Command): void {
    this.#delayed.set(key, restore);
    const zset = this.#keys.get(key);
    if (zset?.type === "zset") {
      for (const [hex, m] of zset.members) this.#arm(key, hex, m.score);
    }
  }

  // The stand-in moves a due member back itself, at the moment the test's clock reaches it, so the
  // coordinator counts it again exactly then (a sweeper on the server side of the in-process mode).
  #arm(key: string, hex: string, score: number): void {
    const id = `${key}\u0000${hex}`;
    this.#timers.get(id)?.cancel();
    const timer = this.#clock.setTimer(score - this.#clock.now(), () => {
      this.#timers.delete(id);
      const zset = this.#keys.get(key);
      const entry = zset?.type === "zset" ? zset.members.get(hex) : undefined;
      const restore = this.#delayed.get(key);
      if (entry === undefined || restore === undefined || zset?.type !== "zset") return;
      zset.members.delete(hex);
      const command = restore(entry.member);
      this.execute(command.name, command.args);
    });
    this.#timers.set(id, timer);
  }

  // Lists

  #push(key: string, values: readonly Arg[], left: boolean): Reply {
    let list = this.#list(key);
    if (list === undefined) {
      list = new ListValue();
      this.#keys.set(key, list);
    }
    const reading = (this.#queues.get(key)?.members ?? 0) > 0;
    for (const v of values) {
      const item: ListItem = { value: buf(v), counted: false };
      if (reading) this.#countItem(item);
      if (left) list.items.unshift(item);
      else list.items.push(item);
    }
    this.#wake(key);
    return list.items.length;
  }

  #lmove(args: readonly Arg[]): Reply {
    const source = this.#list(str(args[0]));
    const destinationKey = str(args[1]);
    let destination = this.#list(destinationKey);
    const from = str(args[2]).toUpperCase();
    const to = str(args[3]).toUpperCase();
    if (source === undefined || source.items.length === 0) return null;
    const item = from === "RIGHT" ? source.items.pop()! : source.items.shift()!;
    if (destination === undefined) {
      destination = new ListValue();
      this.#keys.set(destinationKey, destination);
    }
    if (to === "LEFT") destination.items.unshift(item);
    else destination.items.push(item);
    this.#wake(destinationKey);
    return item.value;
  }

  #lrem(args: readonly Arg[]): Reply {
    const list = this.#list(str(args[0]));
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
          this.#coordinator.consumed();
        }
        removed++;
        remaining--;
      } else {
        i++;
      }
    }
    return removed;
  }

  #countItem(item: ListItem): void {
    if (item.counted) return;
    item.counted = true;
    this.#coordinator.enqueued();
  }

  // Pub/Sub

  #publish(channel: string, message: Buffer): Reply {
    let receivers = 0;
    for (const c of this.#channels) {
      if (c.pattern === undefined ? c.name !== channel : !c.pattern.test(channel)) continue;
      this.#coordinator.enqueued();
      c.listener(channel, Buffer.from(message));
      receivers++;
    }
    return receivers;
  }

  #pubsubLink(listener: PubSubListener, mine: Set<Channel>): PubSubLink {
    const opened: Channel[] = [];
    return {
      subscribe: async (name, pattern) => {
        const channel = { name, pattern: pattern ? globToRegExp(name) : undefined, listener };
        opened.push(channel);
        mine.add(channel);
        this.#channels.add(channel);
      },
      close: async () => {
        for (const c of opened) {
          this.#channels.delete(c);
          mine.delete(c);
        }
      },
    };
  }

  // Counting for the coordinator

  #count(group: StreamGroup, id: string): void {
    if (group.counted.has(id)) return;
    group.counted.add(id);
    this.#coordinator.enqueued();
  }

  #release(group: StreamGroup, id: string): void {
    if (group.counted.delete(id)) this.#coordinator.consumed();
  }

  #join(reader: Reader): () => void {
    if (reader.kind === "stream") {
      const group = this.#stream(reader.key)?.groups.get(reader.group);
      const stream = this.#stream(reader.key);
      if (group === undefined || stream === undefined) return () => {};
      if (group.members++ === 0) {
        for (const id of group.pending.keys()) this.#count(group, id);
        for (const e of stream.entries) {
          if (compareIds(e.id, group.lastDelivered) > 0) this.#count(group, e.key);
        }
      }
      let left = false;
      return () => {
        if (left) return;
        left = true;
        if (--group.members > 0) return;
        // Entries no one has read have no consumer any more; read ones stay counted until acked.
        for (const id of [...group.counted]) if (!group.pending.has(id)) this.#release(group, id);
      };
    }
    let queue = this.#queues.get(reader.key);
    if (queue === undefined) {
      queue = { members: 0, processing: reader.processing };
      this.#queues.set(reader.key, queue);
      this.#processing.set(reader.processing, reader.key);
    }
    const q = queue;
    if (q.members++ === 0) {
      for (const item of this.#list(reader.key)?.items ?? []) this.#countItem(item);
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--q.members > 0) return;
      for (const item of this.#list(reader.key)?.items ?? []) {
        if (!item.counted) continue;
        item.counted = false;
        this.#coordinator.consumed();
      }
    };
  }
}

/** A blocking connection of the stand-in: a blocked command waits for a write, its timeout, or an interrupt. */
class MemoryBlockingLink implements BlockingLink {
  readonly #server: MemoryRedis;
  #finish: ((reply: Reply) => void) | undefined;
  #closed = false;

  constructor(server: MemoryRedis) {
    this.#server = server;
  }

  call(name: string, args: readonly Arg[]): Promise<Reply> {
    if (this.#closed) return Promise.resolve(null);
    let reply: Reply;
    try {
      reply = this.#server.execute(name, args);
    } catch (error) {
      return Promise.reject(error);
    }
    const upper = name.toUpperCase();
    const blockAt = args.findIndex((a) => String(a).toUpperCase() === "BLOCK");
    const blockMs =
      upper === "BLMOVE"
        ? Number(String(args[4])) * 1000
        : blockAt >= 0
          ? Number(String(args[blockAt + 1]))
          : undefined;
    if (reply !== null || blockMs === undefined) return Promise.resolve(reply);
    const streamsAt = args.findIndex((a) => String(a).toUpperCase() === "STREAMS");
    const key = String(upper === "BLMOVE" ? args[0] : args[streamsAt + 1]);
    return new Promise<Reply>((resolve, reject) => {
      let timer: ClockTimer | undefined;
      const finish = (value: Reply) => {
        stop();
        timer?.cancel();
        this.#finish = undefined;
        resolve(value);
      };
      // A blocked `BLMOVE` of a list onto itself writes to the key it waits on: the write wakes the
      // waiters again, this one included, which must not retry inside its own retry.
      let attempting = false;
      const stop = this.#server.wait(key, {
        attempt: () => {
          if (attempting) return false;
          let again: Reply;
          attempting = true;
          try {
            again = this.#server.execute(name, args);
          } catch (error) {
            stop();
            timer?.cancel();
            this.#finish = undefined;
            reject(error);
            return true;
          } finally {
            attempting = false;
          }
          if (again === null) return false;
          finish(again);
          return true;
        },
      });
      if (blockMs > 0) timer = this.#server.clock.setTimer(blockMs, () => finish(null));
      this.#finish = finish;
    });
  }

  async interrupt(): Promise<void> {
    this.#finish?.(null);
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#finish?.(null);
  }
}
