import { randomUUID } from "node:crypto";
import {
  type Clock,
  HeaderMap,
  headerNames,
  isRustStreamError,
  RustStreamError,
} from "@ruststream/core";
import { type PendingReply, ReplyWaiters } from "@ruststream/core/broker";
import type { ConsumedRecord, Link, LinkReader, PartitionOffset } from "./client/link.js";
import { ensureTopic } from "./topic/starts.js";

/**
 * What the inbox needs from its connection. Declared here and implemented by the connected broker,
 * so this file never imports connection.ts.
 */
export interface InboxHost {
  readonly link: Link;
  readonly isClosed: boolean;
  closedError(what: string): RustStreamError;
}

// How long shutdown waits for the inbox's reader to close and its topic to go.
const STOP_WAIT_MS = 10_000;

/**
 * The reply inbox of one connection, opened by its first request. Without a `replyTopic` it is a
 * topic of its own, `ruststream-inbox-<uuid>`: one partition, created here, read from its start and
 * deleted at shutdown. With one, it is that existing topic, shared with every other requester
 * naming it: read from its end as the inbox opens, every partition, each reply kept only by the
 * requester waiting for its correlation id. Either way it is read outside any consumer group's
 * sharing (engine.reader), so every reply reaches the requester that asked, and a responder
 * answers with an ordinary publish to `reply-to`.
 */
export class ReplyInbox {
  /** The inbox's own name: its topic when it has one of its own, and its reader's name. */
  readonly #name = `ruststream-inbox-${randomUUID()}`;
  /** Where replies are to go: the `reply-to` of every request. */
  readonly topic: string;
  readonly #shared: boolean;
  readonly #host: InboxHost;
  readonly #waiters: ReplyWaiters;
  #opening: Promise<LinkReader> | undefined;
  #created = false;

  constructor(host: InboxHost, clock: Clock, replyTopic: string | undefined) {
    this.#host = host;
    this.#waiters = new ReplyWaiters(clock, "topic");
    this.#shared = replyTopic !== undefined;
    this.topic = replyTopic ?? this.#name;
  }

  /** Opens the inbox if this is the first request, then waits for the reply to `correlationId`. */
  async awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply> {
    await this.#open();
    // Shut down while the inbox opened: stop() has rejected the waiters already.
    if (this.#host.isClosed) throw this.#host.closedError("request");
    const wait = this.#waiters.wait(correlationId, timeoutMs);
    return { inbox: this.topic, reply: wait.reply, cancel: wait.cancel };
  }

  /** Rejects every waiting request, closes the reader and deletes the inbox's own topic; bounded. */
  async stop(error: RustStreamError): Promise<void> {
    this.#waiters.rejectAll(error);
    const cleanup = async () => {
      const reader = await this.#opening?.catch(() => undefined);
      await reader?.close().catch(() => undefined);
      if (this.#created) {
        await this.#host.link.admin.deleteTopic(this.topic).catch(() => undefined);
      }
    };
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      cleanup(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, STOP_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  #open(): Promise<LinkReader> {
    if (this.#opening === undefined) {
      const opening = this.#start();
      this.#opening = opening;
      // A failed opening is not kept: the next request tries again.
      opening.catch(() => {
        if (this.#opening === opening) this.#opening = undefined;
      });
    }
    return this.#opening;
  }

  async #start(): Promise<LinkReader> {
    const { admin } = this.#host.link;
    try {
      let partitions: PartitionOffset[];
      if (this.#shared) {
        const count = await ensureTopic(
          admin,
          this.topic,
          undefined,
          "create it first: every requester naming it as replyTopic reads all its partitions",
        );
        // From the end as it is now: a reply to a request sent after this lies past it.
        partitions = await Promise.all(
          Array.from({ length: count }, async (_, partition) => ({
            topic: this.topic,
            partition,
            offset: (await admin.watermarks(this.topic, partition)).high,
          })),
        );
      } else {
        this.#created = true;
        await ensureTopic(admin, this.topic, { partitions: 1 });
        partitions = [{ topic: this.topic, partition: 0, offset: 0n }];
      }
      const reader = await this.#host.link.reader(this.#name, partitions, (records) =>
        this.#received(records),
      );
      // Shut down while it opened, and stop() may have given up waiting for it: close it here.
      if (this.#host.isClosed) {
        await reader.close().catch(() => undefined);
        throw this.#host.closedError("request");
      }
      return reader;
    } catch (error) {
      if (this.#host.isClosed) throw this.#host.closedError("request");
      if (isRustStreamError(error)) throw error;
      throw new RustStreamError(
        "broker-failure",
        this.#shared
          ? `opening the reply topic "${this.topic}" for requests failed: ${(error as Error).message}`
          : `creating the reply inbox "${this.topic}" for requests failed: ${(error as Error).message}; a request's replies come to a topic this connection creates and deletes, so where the cluster does not let this service create and delete topics, give KafkaBroker a replyTopic (an existing topic it may read)`,
        { cause: error },
      );
    }
  }

  #received(records: readonly ConsumedRecord[]): void {
    for (const record of records) {
      const headers = new HeaderMap(record.headers);
      // A late reply, or one for another requester sharing the reply topic, finds nobody waiting
      // here and is dropped.
      this.#waiters.resolve(headers.getString(headerNames.correlationId), {
        name: record.topic,
        payload: record.value,
        headers,
        partitionKey: record.key,
      });
    }
  }
}
