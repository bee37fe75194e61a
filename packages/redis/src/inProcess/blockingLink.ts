import type { Clock, ClockTimer } from "@ruststream/core";
import type { BlockingLink } from "../client/link.js";
import type { Arg, Reply } from "../client/resp.js";

/** A blocked command waiting on a key; the server retries it after every write to that key. */
export interface Waiter {
  /** Tries again after a write to the key; true once it has answered. */
  attempt(): boolean;
}

/** What a blocking connection needs from the in-process server. */
export interface BlockingServer {
  readonly clock: Clock;
  execute(name: string, args: readonly Arg[]): Reply;
  /** Registers a waiter on `key`; answers the call that removes it. */
  wait(key: string, waiter: Waiter): () => void;
}

/**
 * A blocking connection of the stand-in: a blocking command (`XREADGROUP`/`XREAD` with `BLOCK`,
 * `BLMOVE`) runs at once, and when it answers nil it waits for a write to its key, its timeout, or
 * an interrupt.
 */
export class MemoryBlockingLink implements BlockingLink {
  /** The stand-in's connection is never cut. */
  readonly reconnects = 0;
  readonly #server: BlockingServer;
  #finish: ((reply: Reply) => void) | undefined;
  #closed = false;

  constructor(server: BlockingServer) {
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
