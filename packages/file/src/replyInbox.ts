import { randomUUID } from "node:crypto";
import { type Clock, headerNames, type RustStreamError } from "@ruststream/core";
import { type PendingReply, ReplyWaiters } from "@ruststream/core/broker";
import { INBOX_KEY_PREFIX, PARTITION_KEY_HEADER } from "./names.js";
import { wrapFileError } from "./wire/format/errors.js";
import { FileConsumer } from "./wire/io/consumer.js";
import { unwrapFrame } from "./wire/transactionMark.js";

/**
 * What the inbox needs from its connection. Declared here and implemented by the connected broker,
 * so this file never imports connection.ts.
 */
export interface InboxHost {
  /** The file read and written. */
  readonly path: string;
  readonly maxMessageBytes: number;
  readonly isClosed: boolean;
  assertOpen(): void;
  closedError(what: string): RustStreamError;
}

/**
 * The reply inbox of one connection: a stream key of the same file, `ruststream-inbox-<uuid>`, so
 * a responder answers with an ordinary publish to `reply-to`. It is read only while a request
 * waits: the first waiting request opens a follower at the file's end (before the request is
 * written, so its reply lies past it), the last one to settle closes it, so a connection that is
 * not waiting for a reply reads nothing. A reply nobody waits for (late, or stray) is dropped.
 *
 * The file only grows: every reply stays in it, under a key no one reads again once its connection
 * is gone (the file broker README says what that costs).
 */
export class FileReplyInbox {
  /** The inbox's stream key: `reply-to` of every request of the connection. */
  readonly name = `${INBOX_KEY_PREFIX}${randomUUID()}`;
  readonly #host: InboxHost;
  readonly #waiters: ReplyWaiters;
  #reader: Promise<FileConsumer> | undefined;
  /** Requests waiting for their reply (or about to): the reader runs while there are any. */
  #waiting = 0;

  constructor(host: InboxHost, clock: Clock) {
    this.#host = host;
    this.#waiters = new ReplyWaiters(clock, "stream");
  }

  /** Opens the inbox's reader if none runs, then waits for the reply to `correlationId`. */
  async awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply> {
    this.#host.assertOpen();
    this.#waiting++;
    let settled = false;
    const settle = () => {
      if (settled) return;
      settled = true;
      if (--this.#waiting === 0) this.#stopReading();
    };
    try {
      await this.#listen();
      // Shut down while the reader opened: stop() has rejected the waiters already.
      if (this.#host.isClosed) throw this.#host.closedError("request");
    } catch (error) {
      settle();
      throw error;
    }
    const wait = this.#waiters.wait(correlationId, timeoutMs);
    wait.reply.then(settle, settle);
    return {
      inbox: this.name,
      reply: wait.reply,
      cancel: () => {
        wait.cancel();
        settle();
      },
    };
  }

  /** Fails every waiting request and closes the reader, at shutdown. */
  async stop(error: RustStreamError): Promise<void> {
    this.#waiters.rejectAll(error);
    this.#stopReading();
  }

  #listen(): Promise<FileConsumer> {
    if (this.#reader === undefined) {
      const opening = FileConsumer.open(this.#host.path, {
        from: "end",
        follow: true,
        streamKey: this.name,
        maxMessageBytes: this.#host.maxMessageBytes,
      });
      this.#reader = opening;
      opening.then(
        (reader) => void this.#read(opening, reader),
        () => {
          // A failed opening is not kept: the next request tries again.
          if (this.#reader === opening) this.#reader = undefined;
        },
      );
    }
    return this.#reader;
  }

  async #read(opening: Promise<FileConsumer>, reader: FileConsumer): Promise<void> {
    for (;;) {
      let frame: Awaited<ReturnType<FileConsumer["next"]>>;
      try {
        frame = await reader.next();
      } catch (error) {
        // Damage in the file: no reply can come past it, so the waiting requests fail now rather
        // than at their timeouts, and the next request opens a reader at the end again.
        if (this.#reader === opening) this.#reader = undefined;
        reader.close();
        this.#waiters.rejectAll(
          wrapFileError(
            "broker-failure",
            `reading the reply inbox "${this.name}" of ${this.#host.path} failed: ${(error as Error).message}`,
            error,
          ),
        );
        return;
      }
      // Closed: no request waits.
      if (frame === undefined) return;
      const { payload, headers } = unwrapFrame(frame.payload);
      this.#waiters.resolve(headers.getString(headerNames.correlationId), {
        name: this.name,
        payload,
        headers,
        partitionKey: headers.get(PARTITION_KEY_HEADER),
      });
    }
  }

  #stopReading(): void {
    const reader = this.#reader;
    this.#reader = undefined;
    reader?.then(
      (r) => r.close(),
      () => {},
    );
  }
}
