import type { Writable } from "node:stream";
import { RustStreamError } from "@ruststream/core";
import { type LinkChange, LinkStates } from "@ruststream/core/broker";
import type { Cluster, Redis } from "ioredis";
import { watchClient } from "./clientStates.js";
import { ClusterBlockingLink } from "./clusterBlockingLink.js";
import { placeOf, type ResolvedCluster, type ResolvedConnection } from "./connectionOptions.js";
import { call, openCluster, openServer, quit, wire } from "./ioredisClients.js";
import type { BlockingLink, ClusterShape, Link, PubSubLink, PubSubListener } from "./link.js";
import type { Arg, Command, Reply } from "./resp.js";
import { type RedisScript, scriptKeys } from "./script.js";
import { ServerBlockingLink } from "./serverBlockingLink.js";
import { assertOneSlot } from "./slots.js";
import { clusterSubscriber, serverSubscriber } from "./subscriberLink.js";

/** The main client: a connection to one server (or the master behind Sentinel), or a cluster client. */
type Main =
  | { readonly kind: "server"; readonly client: Redis }
  | { readonly kind: "cluster"; readonly client: Cluster; readonly settings: ResolvedCluster };

/** What a connection the link opened beside its main one needs at the link's close. */
interface Closeable {
  close(): Promise<void>;
}

/** The version `INFO server` reports, as `[major, minor]`; undefined when it does not say. */
function versionOf(info: Reply): { text: string; major: number } | undefined {
  const text = /redis_version:([^\r\n]+)/.exec(info?.toString() ?? "")?.[1];
  if (text === undefined) return undefined;
  return { text, major: Number(text.split(".")[0]) };
}

/**
 * The link to a real server, through ioredis: one server, a master behind Sentinel, or a cluster.
 *
 * On one server (and behind Sentinel) the commands one tick sends on the main connection leave in
 * one socket write: the first corks the socket and a `process.nextTick` uncorks it, after the
 * synchronous code and the promise reactions of that tick ran (every ack a batch of handlers
 * settles, say). ioredis still writes and queues each command as it comes, so each keeps its own
 * reply, its own error and its place in the connection's order; only the syscalls are shared. A
 * cluster client writes to each node as commands come. Blocking and subscriber connections write as
 * they come.
 */
export class IoredisLink implements Link {
  readonly #settings: ResolvedConnection;
  readonly #main: Main;
  readonly cluster: ClusterShape | undefined;
  /** What `INFO server` said of the version, at connect. */
  readonly serverVersion: string | undefined;
  readonly #others = new Set<Closeable>();
  /**
   * Every connection's state: the main one, each blocking reader's and each subscriber's (a
   * server's are watched through ioredis' events, a cluster reader's through its SlotConnection).
   */
  readonly states = new LinkStates();
  readonly #unwatchMain: () => void;
  /** Scripts defined on the main client: ioredis sends each as `EVAL` once per connection, then `EVALSHA`. */
  readonly #scripts = new Set<string>();
  /** The socket corked this tick, uncorked by the pending `#flush`. */
  #corked: Writable | undefined;
  readonly #flush = (): void => {
    const socket = this.#corked;
    this.#corked = undefined;
    socket?.uncork();
  };

  private constructor(
    settings: ResolvedConnection,
    main: Main,
    cluster: ClusterShape | undefined,
    version: string | undefined,
  ) {
    this.#settings = settings;
    this.#main = main;
    this.cluster = cluster;
    this.serverVersion = version;
    this.#unwatchMain = watchClient(main.client, placeOf(settings), (change) =>
      this.states.report(main, change),
    );
  }

  static async connect(settings: ResolvedConnection): Promise<IoredisLink> {
    if (settings.kind !== "cluster") {
      const client = await openServer(settings, "main");
      const version = versionOf(await call(client, "INFO", ["server"]).catch(() => null));
      return new IoredisLink(settings, { kind: "server", client }, undefined, version?.text);
    }
    const client = await openCluster(settings);
    try {
      const version = versionOf(await call(client, "INFO", ["server"]).catch(() => null));
      // Sharded Pub/Sub came with Redis 7.0; an older cluster has the classic kind only.
      const sharded = version === undefined || version.major >= 7;
      if (settings.pubsub === "sharded" && !sharded) {
        throw new RustStreamError(
          "invalid-argument",
          `cluster.pubsub is "sharded", and the cluster runs Redis ${version?.text}, which has no sharded Pub/Sub (7.0 and later): leave cluster.pubsub out or set it to "classic"`,
        );
      }
      const pubsub = settings.pubsub ?? (sharded ? "sharded" : "classic");
      return new IoredisLink(
        settings,
        { kind: "cluster", client, settings },
        { pubsub },
        version?.text,
      );
    } catch (error) {
      client.disconnect();
      throw error;
    }
  }

  call(name: string, args: readonly Arg[]): Promise<Reply> {
    this.#coalesce();
    return call(this.#main.client, name, args);
  }

  async transaction(commands: readonly Command[]): Promise<Reply[]> {
    if (this.cluster !== undefined) assertOneSlot(commands);
    // One command is atomic alone: MULTI/EXEC around it would be three commands for the server and
    // a pipeline object here, for the same reply and the same error.
    if (commands.length === 1) {
      const only = commands[0]!;
      return [await this.call(only.name, only.args)];
    }
    this.#coalesce();
    const multi = this.#main.client.multi();
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
    const main = this.#main.client;
    if (!this.#scripts.has(script.name)) {
      main.defineCommand(script.name, { lua: script.lua, numberOfKeys: script.keys });
      this.#scripts.add(script.name);
    }
    this.#coalesce();
    // defineCommand adds the method at run time; its `Buffer` twin answers bulk strings as bytes.
    const client = main as unknown as Record<string, (...args: Arg[]) => Promise<Reply>>;
    return client[`${script.name}Buffer`]!.call(main, ...keys, ...args);
  }

  async blocking(key: string): Promise<BlockingLink> {
    const main = this.#main;
    const { token, report } = this.#reporter();
    if (main.kind === "cluster") {
      const link = new ClusterBlockingLink(main.client, main.settings, key, report);
      this.#track(link, token);
      try {
        await link.init();
      } catch (error) {
        await link.close();
        throw error;
      }
      return link;
    }
    const client = await openServer(this.#server(), "reader");
    const link = new ServerBlockingLink(client, main.client, this.#flush);
    this.#track(link, token, watchClient(client, placeOf(this.#settings), report));
    await link.init();
    return link;
  }

  async subscriber(
    channel: string,
    pattern: boolean,
    listener: PubSubListener,
  ): Promise<PubSubLink> {
    const main = this.#main;
    const { token, report } = this.#reporter();
    if (main.kind === "cluster") {
      const subscriber = await clusterSubscriber(
        main.client,
        main.settings,
        this.cluster?.pubsub === "sharded",
        channel,
        pattern,
        listener,
        report,
      );
      return this.#track(subscriber, token);
    }
    const client = await openServer(this.#server(), "subscriber");
    const unwatch = watchClient(client, placeOf(this.#settings), report);
    try {
      return this.#track(
        await serverSubscriber(client, channel, pattern, listener),
        token,
        unwatch,
      );
    } catch (error) {
      unwatch();
      this.states.forget(token);
      throw error;
    }
  }

  now(): number {
    return Date.now();
  }

  /** The settings of one server or a Sentinel set, for the connections opened beside the main one. */
  #server() {
    const settings = this.#settings;
    if (settings.kind === "cluster") throw new Error("a cluster link opens no server connection");
    return settings;
  }

  /** A connection's key in `states`, and what reports its state there. */
  #reporter(): { token: object; report: (change: LinkChange) => void } {
    const token = {};
    return { token, report: (change) => this.states.report(token, change) };
  }

  /**
   * Keeps `closeable` until it closes, so the link's close closes what its owner did not. Its state
   * (reported under `token`, watched until `unwatch`) counts no more from the moment it closes.
   */
  #track<T extends Closeable>(closeable: T, token: object, unwatch?: () => void): T {
    this.#others.add(closeable);
    const close = closeable.close.bind(closeable);
    closeable.close = async () => {
      this.#others.delete(closeable);
      unwatch?.();
      this.states.forget(token);
      await close();
    };
    return closeable;
  }

  /**
   * Holds this tick's writes on the main socket until the tick's end. Only a ready connection to one
   * server is corked: before that ioredis queues commands and writes them itself once connected, and
   * a cluster client has a socket per node.
   */
  #coalesce(): void {
    if (this.#corked !== undefined) return;
    const main = this.#main;
    if (main.kind !== "server" || main.client.status !== "ready") return;
    const socket = main.client.stream as Writable | undefined;
    if (socket === undefined || !socket.writable) return;
    socket.cork();
    this.#corked = socket;
    process.nextTick(this.#flush);
  }

  async close(): Promise<void> {
    this.#unwatchMain();
    await Promise.all([...this.#others].map((c) => c.close()));
    await quit(this.#main.client);
  }
}
