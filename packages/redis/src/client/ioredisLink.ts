import type { Writable } from "node:stream";
import { RustStreamError } from "@ruststream/core";
import { Redis } from "ioredis";
import { connectionError, type ResolvedConnection } from "./connectionOptions.js";
import type { BlockingLink, Link, PubSubLink, PubSubListener } from "./link.js";
import type { Arg, Command, Reply } from "./resp.js";
import { type RedisScript, scriptKeys } from "./script.js";

// Reconnect for as long as the broker lives: a restarted server is reached again within 2 s.
const retryStrategy = (times: number): number => Math.min(times * 100, 2000);

/** PEM as node:tls takes it: text as is, bytes as a Buffer over the same memory (no copy). */
function pem(value: string | Uint8Array): string | Buffer {
  return typeof value === "string" || Buffer.isBuffer(value)
    ? value
    : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function isList<T>(value: T | readonly T[]): value is readonly T[] {
  return Array.isArray(value);
}

function newClient(settings: ResolvedConnection, role: string): Redis {
  const tls = settings.tls;
  // Built inline, each optional key present only when set: ioredis' option types carry plain
  // optional properties that an object with `undefined` values would not satisfy.
  return new Redis({
    host: settings.host,
    port: settings.port,
    db: settings.db,
    ...(settings.username === undefined ? {} : { username: settings.username }),
    ...(settings.password === undefined ? {} : { password: settings.password }),
    ...(tls === undefined
      ? {}
      : {
          tls: {
            ...(tls.ca === undefined
              ? {}
              : {
                  ca: typeof tls.ca === "string" || !isList(tls.ca) ? pem(tls.ca) : tls.ca.map(pem),
                }),
            ...(tls.cert === undefined ? {} : { cert: pem(tls.cert) }),
            ...(tls.key === undefined ? {} : { key: pem(tls.key) }),
            ...(tls.servername === undefined ? {} : { servername: tls.servername }),
          },
        }),
    // RESP2: the replies this package parses have one shape (ioredis 6 defaults to RESP3).
    protocol: 2,
    lazyConnect: true,
    connectTimeout: settings.connectTimeoutMs,
    connectionName: `ruststream-${role}`,
    // Commands wait for a reconnect instead of failing after a few retries; shutdown rejects them.
    maxRetriesPerRequest: null,
    retryStrategy,
    // Off: ioredis 6's auto-pipelining loses the command name of callBuffer (it reads the first
    // argument as the name). The main connection coalesces one tick's writes itself (IoredisLink).
    enableAutoPipelining: false,
  });
}

/** Connects, or fails with the first error the server or the socket gave, explained. */
async function open(settings: ResolvedConnection, role: string): Promise<Redis> {
  const client = newClient(settings, role);
  try {
    await new Promise<void>((resolve, reject) => {
      const onError = (error: unknown) => {
        client.off("ready", onReady);
        reject(error);
      };
      const onReady = () => {
        client.off("error", onError);
        resolve();
      };
      client.once("error", onError);
      client.once("ready", onReady);
      client.connect().catch(onError);
    });
  } catch (error) {
    client.disconnect();
    throw connectionError(settings, error);
  }
  // Later errors are reconnects in progress; the commands waiting on them report what matters.
  client.on("error", () => {});
  return client;
}

async function quit(client: Redis): Promise<void> {
  if (client.status === "end") return;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.quit().catch(() => undefined),
      new Promise((resolve) => {
        timer = setTimeout(resolve, 1000);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

/** The arguments as ioredis types them: our bytes are Buffers at run time (see RedisBytes). */
const wire = (args: readonly Arg[]): (string | Buffer | number)[] =>
  args as (string | Buffer | number)[];

function call(client: Redis, name: string, args: readonly Arg[]): Promise<Reply> {
  return client.callBuffer(name, wire(args)) as Promise<Reply>;
}

/**
 * A channel's name from its bytes, decoded only when it differs from the last one: a subscriber's
 * messages nearly always name the same channel, and decoding it per message was a few percent of a
 * subscriber's CPU. The last bytes are copied, so no socket chunk is kept alive.
 */
function channelNames(): (channel: Buffer) => string {
  let lastBytes = Buffer.alloc(0);
  let lastName = "";
  return (channel) => {
    const length = channel.length;
    if (length === lastBytes.length && length > 0) {
      let same = true;
      for (let i = 0; i < length; i++) {
        if (channel[i] !== lastBytes[i]) {
          same = false;
          break;
        }
      }
      if (same) return lastName;
    }
    lastName = channel.toString("utf8");
    lastBytes = Buffer.from(channel);
    return lastName;
  };
}

class IoredisBlockingLink implements BlockingLink {
  readonly #client: Redis;
  readonly #main: Redis;
  readonly #flushMain: () => void;
  #id: number | undefined;
  #reconnects = 0;

  constructor(client: Redis, main: Redis, flushMain: () => void) {
    this.#client = client;
    this.#main = main;
    this.#flushMain = flushMain;
    // Opened and ready before this: every later "ready" is a reconnect, which gives the connection
    // a new id (interrupting needs the current one).
    client.on("ready", () => {
      this.#reconnects++;
      this.#id = undefined;
      void this.#fetchId();
    });
  }

  get reconnects(): number {
    return this.#reconnects;
  }

  async #fetchId(): Promise<number | undefined> {
    try {
      const id = await this.#client.client("ID");
      this.#id = Number(id);
    } catch {
      this.#id = undefined;
    }
    return this.#id;
  }

  async init(): Promise<void> {
    await this.#fetchId();
  }

  call(name: string, args: readonly Arg[]): Promise<Reply> {
    // What this tick sent on the main connection (the acks of what the last read brought) leaves
    // before the next read, in the order the code issued them, as a loop without coalescing has it.
    this.#flushMain();
    return call(this.#client, name, args);
  }

  async interrupt(): Promise<void> {
    const id = this.#id ?? (await this.#fetchId());
    if (id === undefined) return;
    try {
      await this.#main.call("CLIENT", ["UNBLOCK", id]);
    } catch {
      // An ACL user without CLIENT: the blocked read ends at its own timeout instead.
    }
  }

  async close(): Promise<void> {
    await this.interrupt();
    this.#client.disconnect();
  }
}

/**
 * The link to a real server, through ioredis.
 *
 * The commands one tick sends on the main connection leave in one socket write: the first corks the
 * socket and a `process.nextTick` uncorks it, after the synchronous code and the promise reactions
 * of that tick ran (every ack a batch of handlers settles, say). ioredis still writes and queues each
 * command as it comes, so each keeps its own reply, its own error and its place in the connection's
 * order; only the syscalls are shared. Blocking and subscriber connections write as they come.
 */
export class IoredisLink implements Link {
  readonly #settings: ResolvedConnection;
  readonly #main: Redis;
  readonly #others = new Set<Redis>();
  /** Scripts defined on the main client: ioredis sends each as `EVAL` once per connection, then `EVALSHA`. */
  readonly #scripts = new Set<string>();
  /** The socket corked this tick, uncorked by the pending `#flush`. */
  #corked: Writable | undefined;
  readonly #flush = (): void => {
    const socket = this.#corked;
    this.#corked = undefined;
    socket?.uncork();
  };

  private constructor(settings: ResolvedConnection, main: Redis) {
    this.#settings = settings;
    this.#main = main;
  }

  static async connect(settings: ResolvedConnection): Promise<IoredisLink> {
    return new IoredisLink(settings, await open(settings, "main"));
  }

  call(name: string, args: readonly Arg[]): Promise<Reply> {
    this.#coalesce();
    return call(this.#main, name, args);
  }

  async transaction(commands: readonly Command[]): Promise<Reply[]> {
    // One command is atomic alone: MULTI/EXEC around it would be three commands for the server and
    // a pipeline object here, for the same reply and the same error.
    if (commands.length === 1) {
      const only = commands[0]!;
      return [await this.call(only.name, only.args)];
    }
    this.#coalesce();
    const multi = this.#main.multi();
    for (const c of commands) multi.callBuffer(c.name, wire(c.args));
    const results = await multi.exec();
    if (results === null) {
      throw new RustStreamError(
        "broker-failure",
        "Redis discarded the transaction (EXEC returned nil)",
      );
    }
    const replies: Reply[] = [];
    for (const [error, reply] of results) {
      if (error !== null) throw error;
      replies.push(reply as Reply);
    }
    return replies;
  }

  async script(script: RedisScript, keys: readonly string[], args: readonly Arg[]): Promise<Reply> {
    scriptKeys(script, keys);
    if (!this.#scripts.has(script.name)) {
      this.#main.defineCommand(script.name, { lua: script.lua, numberOfKeys: script.keys });
      this.#scripts.add(script.name);
    }
    this.#coalesce();
    // defineCommand adds the method at run time; its `Buffer` twin answers bulk strings as bytes.
    const client = this.#main as unknown as Record<string, (...args: Arg[]) => Promise<Reply>>;
    return client[`${script.name}Buffer`]!.call(this.#main, ...keys, ...args);
  }

  async blocking(): Promise<BlockingLink> {
    const client = await open(this.#settings, "reader");
    this.#others.add(client);
    client.once("end", () => this.#others.delete(client));
    const link = new IoredisBlockingLink(client, this.#main, this.#flush);
    await link.init();
    return link;
  }

  async pubsub(listener: PubSubListener): Promise<PubSubLink> {
    const client = await open(this.#settings, "subscriber");
    this.#others.add(client);
    client.once("end", () => this.#others.delete(client));
    const channelName = channelNames();
    // The channels subscribed by name: with one (a subscription's own connection), every `message`
    // is on it, and its name needs no decoding.
    const named: string[] = [];
    client.on("messageBuffer", (channel: Buffer, message: Buffer) =>
      listener(named.length === 1 ? named[0]! : channelName(channel), message),
    );
    client.on("pmessageBuffer", (_pattern: Buffer, channel: Buffer, message: Buffer) =>
      listener(channelName(channel), message),
    );
    return {
      subscribe: async (channel, pattern) => {
        if (pattern) {
          await client.psubscribe(channel);
        } else {
          if (!named.includes(channel)) named.push(channel);
          await client.subscribe(channel);
        }
      },
      close: () => quit(client),
    };
  }

  now(): number {
    return Date.now();
  }

  /**
   * Holds this tick's writes on the main socket until the tick's end. Only a ready connection is
   * corked: before that ioredis queues commands and writes them itself once connected.
   */
  #coalesce(): void {
    if (this.#corked !== undefined) return;
    const main = this.#main;
    if (main.status !== "ready") return;
    const socket = main.stream as Writable | undefined;
    if (socket === undefined || !socket.writable) return;
    socket.cork();
    this.#corked = socket;
    process.nextTick(this.#flush);
  }

  async close(): Promise<void> {
    await Promise.all([...this.#others].map((c) => quit(c)));
    await quit(this.#main);
  }
}
