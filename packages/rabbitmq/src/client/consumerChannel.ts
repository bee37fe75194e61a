import { RustStreamError } from "@ruststream/core";
import type { Channel, ChannelModel, ConsumeMessage } from "amqplib";
import type { ConsumeRequest, LinkConsumer, LinkDelivery, LinkProperties } from "../link.js";
import { streamOffsetArgument } from "../topology/streamOffset.js";
import type { Table } from "../topology/topology.js";
import { AckBatch } from "./ackBatch.js";
import { linkProperties } from "./properties.js";
import type { StreamEnds } from "./streamBounds.js";
import { offsetOf, StreamRun } from "./streamRun.js";

/**
 * One consumer on a channel of its own, so its prefetch (`basic.qos`) is its own. It outlives its
 * channels: after a reconnect (or a channel the server closed) `attach` opens a new channel and
 * consumes again. A delivery keeps the channel it came on: settling it once that channel is gone
 * throws, and never acks a message of the new channel that happens to have the same tag.
 *
 * A consumer of a stream (its arguments name an `x-stream-offset`) consumes again from where it
 * left off, not from its request's offset: the lowest offset it handed over and that was not
 * settled, else one past the last it handed over. The request's offset holds until the first
 * delivery; a seek makes a new consumer, so its offset is the new base.
 */
export class ConsumerChannel implements LinkConsumer {
  readonly #request: ConsumeRequest;
  readonly #forget: (consumer: ConsumerChannel) => void;
  readonly #streamEnds: StreamEnds;
  #channel: Channel | undefined;
  #acks: AckBatch | undefined;
  #tag: string | undefined;
  /** No deliveries wanted any more (`stop` or `cancel`): a lost channel is not opened again. */
  #cancelled = false;
  /** `cancel` ran: the channel's close, done or under way. */
  #closing: Promise<void> | undefined;
  /** A stream's: the current channel's deliveries, and where the next channel starts. */
  #run: StreamRun | undefined;
  #resumeAt: number | undefined;

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
    const args = this.#arguments();
    const run = "x-stream-offset" in this.#request.arguments ? new StreamRun() : undefined;
    this.#run = run;
    const channel = await model.createChannel();
    let closedBy: Error | undefined;
    channel.on("error", (error: Error) => {
      closedBy = error;
    });
    channel.on("close", () => {
      const current = this.#channel === channel;
      if (current) this.#channel = undefined;
      if (!this.#cancelled) {
        if (closedBy !== undefined) onChannelLost(closedBy);
      } else if (current) {
        // Lost while draining (`stop`): nothing more to wait for, and nothing to consume again.
        this.#forget(this);
      }
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
        run?.delivered(message);
        this.#request.onDelivery(new AmqpDelivery(this.#request.queue, acks, live, message, run));
      },
      { arguments: args },
    );
    this.#channel = channel;
    this.#acks = acks;
    this.#tag = consumed.consumerTag;
    if (this.#cancelled) await this.#closeChannel();
  }

  /** The request's arguments, a stream's offset moved to where the channel before left off. */
  #arguments(): Table {
    const resumeAt = this.#run?.resumeAt;
    if (resumeAt !== undefined) this.#resumeAt = resumeAt;
    if (this.#resumeAt === undefined) return this.#request.arguments;
    return { ...this.#request.arguments, ...streamOffsetArgument(this.#resumeAt) };
  }

  /**
   * Closes the channel, once: a second call (the link's close, while a drain's close runs) waits
   * for the same close. The link holds the consumer until its channel closed, so the connection's
   * close waits for it: a connection closed under a channel still closing lost the ack sent just
   * before (the node gave the message back).
   */
  cancel(): Promise<void> {
    this.#cancelled = true;
    this.#closing ??= this.#closeChannel().finally(() => this.#forget(this));
    return this.#closing;
  }

  /**
   * Cancels the consumer (`basic.cancel`; resolves on its `cancel-ok`, after which nothing more is
   * delivered) and keeps the channel open until every delivery made on it is settled, then closes
   * it: a handler still running acks on the channel its message came on. `cancel()` or the
   * connection's close ends the wait sooner (what is open then goes back); a channel lost meanwhile
   * is not opened again, and its deliveries come back from the node as any lost channel's do.
   */
  async stop(): Promise<void> {
    if (this.#cancelled) return;
    this.#cancelled = true;
    const channel = this.#channel;
    const acks = this.#acks;
    const tag = this.#tag;
    this.#tag = undefined;
    if (channel === undefined || acks === undefined) {
      // Between channels (a reconnect under way): nothing is open to drain.
      await this.cancel();
      return;
    }
    acks.flush();
    if (tag !== undefined) await channel.cancel(tag).catch(() => {});
    // Lost while cancelling: what was open went back with it, and its close let go of the consumer.
    if (this.#channel !== channel) return;
    acks.whenSettled(() => void this.cancel());
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
  readonly #run: StreamRun | undefined;

  constructor(
    queue: string,
    acks: AckBatch,
    live: { readonly open: boolean },
    message: ConsumeMessage,
    run: StreamRun | undefined,
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
    this.#run = run;
  }

  ack(): void {
    this.#assertLive("ack");
    this.#acks.ack(this.#message);
    this.#run?.settled(this.#message);
  }

  reject(requeue: boolean): void {
    this.#assertLive("reject");
    this.#acks.reject(this.#message, requeue);
    this.#run?.settled(this.#message);
  }

  #assertLive(what: string): void {
    if (this.#live.open) return;
    if (this.#run !== undefined) {
      // A stream keeps every message: the consumer reads it again, from this run's lowest offset
      // not settled (this one's at the latest; deliveries of a closed channel settle nothing).
      throw new RustStreamError(
        "broker-failure",
        `cannot ${what} the delivery at offset ${offsetOf(this.#message)} of stream "${this.queue}": the channel it came on closed (a lost connection), so the consumer reads the stream again from offset ${this.#run.resumeAt}, this delivery included`,
      );
    }
    throw new RustStreamError(
      "broker-failure",
      `cannot ${what} a delivery of queue "${this.queue}": the channel it came on closed (a lost connection), so RabbitMQ delivers it again`,
    );
  }
}
