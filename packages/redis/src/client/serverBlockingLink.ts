import type { Redis } from "ioredis";
import { call } from "./ioredisClients.js";
import type { BlockingLink } from "./link.js";
import type { Arg, Reply } from "./resp.js";

/**
 * A blocking reader's connection to one server, or to the master behind Sentinel. ioredis brings it
 * back after a cut (behind Sentinel, to whichever master the sentinels name then) and sends the read
 * the cut caught again; `reconnects` counts those returns, so the reader knows a reply may have been
 * lost on the way.
 */
export class ServerBlockingLink implements BlockingLink {
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
