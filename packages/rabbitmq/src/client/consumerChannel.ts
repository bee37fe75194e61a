import { RustStreamError } from "@ruststream/core";
import type { Channel, ChannelModel, ConsumeMessage } from "amqplib";
import type { ConsumeRequest, LinkConsumer, LinkDelivery, LinkProperties } from "../link.js";
import { AckBatch } from "./ackBatch.js";
import { linkProperties } from "./properties.js";
import type { StreamEnds } from "./streamBounds.js";

/**
 * One consumer on a channel of its own, so its prefetch (`basic.qos`) is its own. It outlives its
 * channels: after a reconnect (or a channel the server closed) `attach` opens a new channel and
 * consumes again. A delivery keeps the channel it came on: settling it once that channel is gone
 * throws, and never acks a message of the new channel that happens to have the same tag.
 */
export class ConsumerChannel implements LinkConsumer {
  readonly #request: ConsumeRequest;
  readonly #forget: (consumer: ConsumerChannel) => void;
  readonly #streamEnds: StreamEnds;
  #channel: Channel | undefined;
  #acks: AckBatch | undefined;
  #tag: string | undefined;
  #cancelled = false;

  constructor(
    request: ConsumeRequest,
    forget: (consumer: ConsumerChannel) => void,
    streamEnds: StreamEnds,
  ) {
    this.#request = request;
    this.#forget = forget;
    this.#streamEnds = streamEnds;
  }

  get cancelled(): boolean {
    return this.#cancelled;
  }

  /** Opens a channel on `model` and consumes; `onChannelLost` hears a close the server made. */
  async attach(model: ChannelModel, onChannelLost: (error: Error) => void): Promise<void> {
    if (this.#cancelled) return;
    const channel = await model.createChannel();
    let closedBy: Error | undefined;
    channel.on("error", (error: Error) => {
      closedBy = error;
    });
    channel.on("close", () => {
      if (this.#channel === channel) this.#channel = undefined;
      if (!this.#cancelled && closedBy !== undefined) onChannelLost(closedBy);
    });
    await channel.prefetch(this.#request.prefetch);
    const live = { open: true };
    const acks = new AckBatch(channel, Math.ceil(this.#request.prefetch / 4));
    channel.on("close", () => {
      live.open = false;
      acks.close();
    });
    const consumed = await channel.consume(
      this.#request.queue,
      (message) => {
        if (message === null) {
          // basic.cancel from the server: the queue was deleted, or a quorum queue lost its leader.
          this.#tag = undefined;
          this.#request.onCancelled(
            `RabbitMQ cancelled the consumer of queue "${this.#request.queue}"`,
          );
          return;
        }
        acks.delivered(message);
        this.#streamEnds.saw(this.#request.queue, message.properties.headers?.["x-stream-offset"]);
        this.#request.onDelivery(new AmqpDelivery(this.#request.queue, acks, live, message));
      },
      { arguments: this.#request.arguments },
    );
    this.#channel = channel;
    this.#acks = acks;
    this.#tag = consumed.consumerTag;
    if (this.#cancelled) await this.#closeChannel();
  }

  async cancel(): Promise<void> {
    if (this.#cancelled) return;
    this.#cancelled = true;
    this.#forget(this);
    await this.#closeChannel();
  }

  /** Stops deliveries, then closes the channel: what was handed out and not acked goes back. */
  async #closeChannel(): Promise<void> {
    const channel = this.#channel;
    const tag = this.#tag;
    const acks = this.#acks;
    this.#channel = undefined;
    this.#acks = undefined;
    this.#tag = undefined;
    if (channel === undefined) return;
    // The acks made so far go before the cancel, and those made during it before the close: what
    // is not acked goes back with the channel.
    acks?.flush();
    if (tag !== undefined) await channel.cancel(tag).catch(() => {});
    acks?.flush();
    await channel.close().catch(() => {});
  }
}

/**
 * A delivery as the subscription sees it: one object per message, its settles methods (no closures
 * made per message), refused once the channel it came on is gone.
 */
class AmqpDelivery implements LinkDelivery {
  readonly queue: string;
  readonly exchange: string;
  readonly routingKey: string;
  readonly content: Uint8Array;
  readonly properties: LinkProperties;
  readonly redelivered: boolean;
  readonly #acks: AckBatch;
  readonly #live: { readonly open: boolean };
  readonly #message: ConsumeMessage;

  constructor(
    queue: string,
    acks: AckBatch,
    live: { readonly open: boolean },
    message: ConsumeMessage,
  ) {
    this.queue = queue;
    this.exchange = message.fields.exchange;
    this.routingKey = message.fields.routingKey;
    this.content = message.content;
    this.properties = linkProperties(message);
    this.redelivered = message.fields.redelivered;
    this.#acks = acks;
    this.#live = live;
    this.#message = message;
  }

  ack(): void {
    this.#assertLive("ack");
    this.#acks.ack(this.#message);
  }

  reject(requeue: boolean): void {
    this.#assertLive("reject");
    this.#acks.reject(this.#message, requeue);
  }

  #assertLive(what: string): void {
    if (!this.#live.open) {
      throw new RustStreamError(
        "broker-failure",
        `cannot ${what} a delivery of queue "${this.queue}": the channel it came on closed (a lost connection), so RabbitMQ delivers it again`,
      );
    }
  }
}
