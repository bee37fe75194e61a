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
// keeps its own: after each handling, the handled message's offset goes to a file (written
// synchronously, after the handling's line), and a start reads it and subscribes from the offset
// after it, or from the first one when there is none. A SIGKILL so costs at most the handling whose
// line was printed and whose offset was not stored yet.
import { openSync, readFileSync, writeSync } from "node:fs";
import type { HandlerContext, Outcome, RustStream, SubscriberBuilder } from "@ruststream/core";
import { RabbitBroker, RabbitPosition, RabbitQueue, RabbitStream } from "@ruststream/rabbitmq";
import { RABBIT_PREFETCH } from "./brokerBounds.js";
import type { ServiceConfig } from "./config.js";
import { RABBIT_STREAM_CREDIT, streamOffsetFile } from "./rabbitmqStream.js";

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

export function mountRabbitStream(app: RustStream, config: ServiceConfig, handle: Handler): void {
  const offsets = new OffsetFile(streamOffsetFile(config.key));
  const stored = offsets.stored;
  const stream = new RabbitStream(config.key, {
    offset: stored === undefined ? "first" : stored + 1n,
    prefetch: RABBIT_STREAM_CREDIT,
  });
  // In the scenario's log: where each start of the service resumed.
  process.stderr.write(
    `[stream] subscribing from ${stored === undefined ? "first" : String(stored + 1n)}\n`,
  );
  app.broker(new RabbitBroker({ url: config.address, declare: true }), (b) =>
    b.subscriber(stream).handle(async (message, ctx) => {
      const outcome = await handle(message, ctx);
      const position = ctx.delivery.position;
      if (!(position instanceof RabbitPosition) || position.offset === undefined) {
        throw new Error(`a stream delivery without an offset: ${String(position)}`);
      }
      offsets.store(position.offset);
      return outcome;
    }),
  );
}

/**
 * The last handled offset, kept in one file as a fixed-width number written over itself at its
 * start: one small write a handling, which a SIGKILL cannot tear (the write is done or not), and no
 * truncation that could leave the file empty meanwhile.
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
    if (text !== undefined && !/^\d{20}$/.test(text)) {
      throw new Error(`${path} holds no offset: ${JSON.stringify(text)}`);
    }
    this.stored = text === undefined ? undefined : BigInt(text);
    this.#fd = openSync(path, text === undefined ? "w" : "r+");
  }

  store(offset: bigint): void {
    writeSync(this.#fd, String(offset).padStart(OffsetFile.#width, "0"), 0);
  }
}
