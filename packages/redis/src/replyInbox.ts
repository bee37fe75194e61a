import { randomUUID } from "node:crypto";
import { type Clock, headerNames, type RawMessage, RustStreamError } from "@ruststream/core";
import type { RedisHost } from "./host.js";
import type { BlockingLink } from "./link/link.js";
import type { PendingReply, RequestHost } from "./publisher.js";
import { entriesOfRead, parseEntry } from "./stream/entry.js";

interface Waiter {
  resolve(reply: RawMessage): void;
  reject(error: Error): void;
  cancel(): void;
}

/**
 * One reply inbox per connection: a stream only this connection reads (`XREAD`, no group), so a
 * responder answers with an ordinary publish to `reply-to`. Deleted at shutdown.
 */
export class ReplyInbox implements RequestHost {
  readonly name = `ruststream.inbox.${randomUUID()}`;
  readonly #host: RedisHost;
  readonly #clock: Clock;
  readonly #waiters = new Map<string, Waiter>();
  #reader: Promise<BlockingLink> | undefined;
  #stopped = false;

  constructor(host: RedisHost, clock: Clock) {
    this.#host = host;
    this.#clock = clock;
  }

  async awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply> {
    this.#host.assertOpen();
    await this.#listen();
    let waiter: Waiter | undefined;
    const reply = new Promise<RawMessage>((resolve, reject) => {
      const timer = this.#clock.setTimer(timeoutMs, () => {
        this.#waiters.delete(correlationId);
        reject(
          new RustStreamError(
            "timeout",
            `no reply within ${timeoutMs} ms: is a handler subscribed to the request's stream, and does it reply to reply-to?`,
          ),
        );
      });
      waiter = {
        resolve: (message) => {
          timer.cancel();
          resolve(message);
        },
        reject: (error) => {
          timer.cancel();
          reject(error);
        },
        cancel: () => timer.cancel(),
      };
    });
    this.#waiters.set(correlationId, waiter!);
    return {
      inbox: this.name,
      reply,
      cancel: () => {
        this.#waiters.delete(correlationId);
        waiter!.cancel();
      },
    };
  }

  async stop(error: RustStreamError): Promise<void> {
    this.#stopped = true;
    for (const waiter of this.#waiters.values()) waiter.reject(error);
    this.#waiters.clear();
    if (this.#reader === undefined) return;
    const reader = await this.#reader.catch(() => undefined);
    await reader?.close();
    await this.#host.link.call("DEL", [this.name]).catch(() => undefined);
  }

  #listen(): Promise<BlockingLink> {
    if (this.#reader !== undefined) return this.#reader;
    this.#reader = this.#host.link.blocking();
    this.#reader.then(
      (reader) => void this.#loop(reader),
      () => {
        this.#reader = undefined;
      },
    );
    return this.#reader;
  }

  async #loop(reader: BlockingLink): Promise<void> {
    let last = "0-0";
    while (!this.#stopped) {
      let reply: Awaited<ReturnType<BlockingLink["call"]>>;
      try {
        reply = await reader.call("XREAD", [
          "COUNT",
          64,
          "BLOCK",
          5000,
          "STREAMS",
          this.name,
          last,
        ]);
      } catch {
        if (this.#stopped) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      for (const raw of entriesOfRead(reply)) {
        const entry = parseEntry(raw);
        if (entry === undefined) continue;
        last = entry.id;
        const id = entry.headers.getString(headerNames.correlationId);
        const waiter = id === undefined ? undefined : this.#waiters.get(id);
        // Late or stray: nobody waits for it.
        if (id === undefined || waiter === undefined) continue;
        this.#waiters.delete(id);
        waiter.resolve({
          name: this.name,
          payload: entry.payload,
          headers: entry.headers,
          partitionKey: entry.headers.get("redis-partition-key"),
        });
      }
      if (Array.isArray(reply)) {
        // Replies already read are of no further use: keep the inbox short.
        await this.#host.link
          .call("XTRIM", [this.name, "MINID", incremented(last)])
          .catch(() => undefined);
      }
    }
  }
}

function incremented(id: string): string {
  const [ms, seq] = id.split("-");
  return `${ms}-${BigInt(seq ?? "0") + 1n}`;
}
