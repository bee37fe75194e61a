import { randomUUID } from "node:crypto";
import { type Clock, headerNames, type RustStreamError } from "@ruststream/core";
import { type PendingReply, ReplyWaiters } from "@ruststream/core/broker";
import type { BlockingLink } from "./client/link.js";
import type { RedisHost } from "./host.js";
import type { RequestHost } from "./publisher.js";
import { entriesOfRead, parseEntry } from "./stream/entry.js";

/**
 * One reply inbox per connection: a stream only this connection reads (`XREAD`, no group), so a
 * responder answers with an ordinary publish to `reply-to`. Deleted at shutdown.
 */
export class ReplyInbox implements RequestHost {
  readonly name = `ruststream.inbox.${randomUUID()}`;
  readonly #host: RedisHost;
  readonly #waiters: ReplyWaiters;
  #reader: Promise<BlockingLink> | undefined;
  #stopped = false;

  constructor(host: RedisHost, clock: Clock) {
    this.#host = host;
    this.#waiters = new ReplyWaiters(clock, "stream");
  }

  async awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply> {
    this.#host.assertOpen();
    await this.#listen();
    const wait = this.#waiters.wait(correlationId, timeoutMs);
    return { inbox: this.name, reply: wait.reply, cancel: wait.cancel };
  }

  async stop(error: RustStreamError): Promise<void> {
    this.#stopped = true;
    this.#waiters.rejectAll(error);
    if (this.#reader === undefined) return;
    const reader = await this.#reader.catch(() => undefined);
    await reader?.close();
    await this.#host.link.call("DEL", [this.name]).catch(() => undefined);
  }

  #listen(): Promise<BlockingLink> {
    if (this.#reader !== undefined) return this.#reader;
    this.#reader = this.#host.link.blocking(this.name);
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
        // A late or stray reply finds nobody waiting and is dropped.
        this.#waiters.resolve(entry.headers.getString(headerNames.correlationId), {
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
