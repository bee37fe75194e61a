// The service's RabbitMQ side for a classic queue and a stream queue (the quorum queue's is
// rabbitmqService.ts).
//
// Classic: one durable classic queue both replicas consume, declared with
// `x-single-active-consumer`, so the server delivers to one replica at a time and a key's messages
// keep the queue's order; a lost channel's unacked messages go back to the queue's head, and the
// next consumer (or the same one, back) gets them first. With a retry plan its dead letter is a
// classic queue of the same kind; a classic queue counts nothing, so the runtime keeps the cap (a
// counted copy republished to the queue, then the original acked) and writes the dead letter.
//
// Stream: one replica (every AMQP consumer of a stream reads all of it: there is no group to share
// it in), reading from an offset. The server keeps no offset for an AMQP consumer, so the service
// keeps its own: after each handling, the offset to resume from goes to a file (written
// synchronously, after the handling's line): the one after the handled message, or, while the
// runtime holds a retry copy or dead letter in memory, that message's (streamResume.ts). A start
// subscribes from it, or from the first offset when there is none. A SIGKILL so costs at most the
// handling whose line was printed and whose offset was not stored yet, and what came after a held
// message, read again.
import { openSync, readFileSync, writeSync } from "node:fs";
import type { HandlerContext, Outcome, RustStream, SubscriberBuilder } from "@ruststream/core";
import { RabbitBroker, RabbitPosition, RabbitQueue, RabbitStream } from "@ruststream/rabbitmq";
import { RABBIT_PREFETCH } from "./brokerBounds.js";
import type { ServiceConfig } from "./config.js";
import { RABBIT_STREAM_CREDIT, streamOffsetFile } from "./rabbitmqStream.js";
import { StreamResume } from "./streamResume.js";

type Handler = (message: unknown, ctx: HandlerContext) => Promise<Outcome | undefined>;

export function mountRabbitClassic(
  app: RustStream,
  config: ServiceConfig,
  declare: (
    subscriber: (source: RabbitQueue) => SubscriberBuilder<unknown>,
    source: (queue: string) => RabbitQueue,
  ) => void,
): void {
  const source = (queue: string) =>
    new RabbitQueue(queue, {
      durable: true,
      prefetch: RABBIT_PREFETCH,
      arguments: { "x-single-active-consumer": true },
    });
  app.broker(new RabbitBroker({ url: config.address, declare: true }), (b) =>
    declare((s: RabbitQueue) => b.subscriber(s), source),
  );
}

export function mountRabbitStream(
  app: RustStream,
  config: ServiceConfig,
  declare: (
    subscriber: (source: RabbitStream | RabbitQueue) => SubscriberBuilder<unknown>,
    source: (queue: string) => RabbitStream | RabbitQueue,
    handle: Handler,
  ) => void,
  handle: Handler,
): void {
  const offsets = new OffsetFile(streamOffsetFile(config.key));
  const from = offsets.stored ?? "first";
  const stream = new RabbitStream(config.key, {
    offset: from,
    prefetch: RABBIT_STREAM_CREDIT,
  });
  // In the scenario's log: where each start of the service resumed.
  process.stderr.write(`[stream] subscribing from ${String(from)}\n`);
  const resume = new StreamResume();
  const store = (): void => {
    const next = resume.next;
    if (next !== undefined) offsets.store(next);
  };
  // The runtime's retry copies and dead letters name the delivery they stand for (`cause`): once
  // one is published, its original is no longer held in memory only.
  app.use({
    publish: async (message, next) => {
      const result = await next(message);
      if (message.cause?.name === config.key) {
        resume.published(offsetOf(message.cause.position));
        store();
      }
      return result;
    },
  });
  // A retry plan's dead letter is a durable classic queue: its reads settle on the server, so it
  // needs no offset of its own.
  const source = (queue: string) =>
    queue === config.key ? stream : new RabbitQueue(queue, { durable: true });
  app.broker(new RabbitBroker({ url: config.address, declare: true }), (b) =>
    declare(
      (s) => (s instanceof RabbitStream ? b.subscriber(s) : b.subscriber(s)),
      source,
      async (message, ctx) => {
        const offset = offsetOf(ctx.delivery.position);
        let outcome: Outcome | undefined;
        try {
          outcome = await handle(message, ctx);
        } catch (error) {
          // A thrown error is a retry after a backoff, or the dead letter: a copy held in memory.
          resume.handled(offset, true);
          store();
          throw error;
        }
        resume.handled(offset, outcome !== undefined && HELD.has(outcome.kind));
        store();
        return outcome;
      },
    ),
  );
}

/** The outcomes a stream's runtime answers with a copy or dead letter it publishes itself. */
const HELD: ReadonlySet<Outcome["kind"]> = new Set(["retry", "retry-after", "dead-letter"]);

function offsetOf(position: unknown): bigint {
  if (!(position instanceof RabbitPosition) || position.offset === undefined) {
    throw new Error(`a stream delivery without an offset: ${String(position)}`);
  }
  return position.offset;
}

/**
 * The offset to resume from, kept in one file as a fixed-width number written over itself at its
 * start: one small write a handling, which a SIGKILL cannot tear (the write is done or not), and no
 * truncation that could leave the file empty meanwhile. Empty: created, never written (a kill
 * before the first store).
 */
class OffsetFile {
  static readonly #width = 20;
  readonly stored: bigint | undefined;
  readonly #fd: number;

  constructor(path: string) {
    let text: string | undefined;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    // BigInt("") is 0n: a damaged file must stop the service, not send it back to the start.
    if (text !== undefined && text !== "" && !/^\d{20}$/.test(text)) {
      throw new Error(`${path} holds no offset: ${JSON.stringify(text)}`);
    }
    this.stored = text === undefined || text === "" ? undefined : BigInt(text);
    this.#fd = openSync(path, text === undefined ? "w" : "r+");
  }

  store(offset: bigint): void {
    writeSync(this.#fd, String(offset).padStart(OffsetFile.#width, "0"), 0);
  }
}
