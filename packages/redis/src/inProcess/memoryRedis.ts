import { type Clock, systemClock } from "@ruststream/core";
import { type Coordinator, noCoordinator } from "@ruststream/core/broker";
import type { ClusterShape, Link } from "../client/link.js";
import type { Arg, Command, Reply } from "../client/resp.js";
import { scriptKeys } from "../client/script.js";
import { assertOneSlot } from "../client/slots.js";
import { type BlockingServer, MemoryBlockingLink, type Waiter } from "./blockingLink.js";
import { type Commands, type Handler, ReplyError, type Server } from "./command.js";
import { consumerGroupCommands, joinGroup } from "./consumerGroups.js";
import { keyCommands } from "./keys.js";
import { joinList, listCommands } from "./lists.js";
import type { Channel, DelayedSets, ListReaders, StoredValue } from "./memoryValues.js";
import { pubsubCommands, subscriberLink } from "./pubsub.js";
import { sortedSetCommands, watchDelayed } from "./sortedSets.js";
import { streamCommands } from "./streams.js";

// An in-process stand-in of the Redis commands this package sends, with the server's answers and
// errors (RESP2 shapes). The broker's own code runs unchanged on top of it, so the in-process mode
// settles exactly as the server does. It also counts, for a test's coordinator, what each source
// holds: entries a group has not acked, values a reliable list has not removed, messages published
// to a subscribed channel until the subscriber is done with them.
//
// This file is the server: its keys, blocked commands, transactions and scripts, and the one command
// table every command goes through. Each data type's file holds its commands (streams.ts,
// consumerGroups.ts, lists.ts, sortedSets.ts, pubsub.ts, keys.ts) and the table joins them.

/** Joins each data type's commands into one table, refusing a name two of them claim. */
function commandTable(parts: readonly Commands[]): ReadonlyMap<string, Handler> {
  const table = new Map<string, Handler>();
  for (const part of parts) {
    for (const [name, handler] of Object.entries(part)) {
      if (table.has(name)) throw new Error(`the in-process Redis has two handlers for ${name}`);
      table.set(name, handler);
    }
  }
  return table;
}

/** Every command the stand-in answers, by upper-case name: one lookup per command. */
const commands = commandTable([
  keyCommands,
  streamCommands,
  consumerGroupCommands,
  listCommands,
  sortedSetCommands,
  pubsubCommands,
]);

/**
 * The in-process server: one per {@link RedisBroker} object, shared by its connections. Given a
 * cluster's shape (a broker configured for a cluster), it answers as the cluster would where the
 * broker's code can tell: a transaction across slots is refused the same way, derived keys are
 * named into their key's slot, channels are sharded unless the classic mode was chosen. Its keys
 * still live in one map: nothing moves between nodes here.
 */
export class MemoryRedis implements Server, BlockingServer {
  readonly cluster: ClusterShape | undefined;
  #clock: Clock = systemClock;
  #coordinator: Coordinator = noCoordinator;
  readonly keys = new Map<string, StoredValue>();
  readonly listReaders: ListReaders = new Map();
  readonly delayed: DelayedSets = { restore: new Map(), timers: new Map() };
  readonly channels = new Set<Channel>();
  readonly #waiters = new Map<string, Set<Waiter>>();

  constructor(cluster: ClusterShape | undefined) {
    this.cluster = cluster;
  }

  attach(clock: Clock, coordinator: Coordinator): void {
    this.#clock = clock;
    this.#coordinator = coordinator;
  }

  get clock(): Clock {
    return this.#clock;
  }

  get coordinator(): Coordinator {
    return this.#coordinator;
  }

  link(): Link {
    const blockers = new Set<MemoryBlockingLink>();
    const subscribers = new Set<Channel>();
    return {
      cluster: this.cluster,
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
      subscriber: async (name, pattern, listener) =>
        subscriberLink(
          this,
          { name, pattern, sharded: this.cluster?.pubsub === "sharded" },
          listener,
          subscribers,
        ),
      now: () => this.#clock.now(),
      close: async () => {
        for (const b of blockers) await b.close();
        for (const c of subscribers) this.channels.delete(c);
      },
      joined: (reader) =>
        reader.kind === "stream"
          ? joinGroup(this, reader.key, reader.group)
          : joinList(this, reader.key),
      watchDelayed: (key, restore) => watchDelayed(this, key, restore),
      callNow: (name, args) => this.execute(name, args),
    };
  }

  /** Runs one command at once. Throws the server's error reply. */
  execute(name: string, args: readonly Arg[]): Reply {
    const handler = commands.get(name.toUpperCase());
    if (handler === undefined) throw new ReplyError(`ERR unknown command '${name}'`);
    return handler(this, args);
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

  wake(key: string): void {
    const set = this.#waiters.get(key);
    if (set === undefined) return;
    for (const waiter of [...set]) if (waiter.attempt()) set.delete(waiter);
  }

  #transaction(commands: readonly Command[]): Reply[] {
    if (this.cluster !== undefined) assertOneSlot(commands);
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
}
