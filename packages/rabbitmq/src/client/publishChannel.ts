import { RustStreamError } from "@ruststream/core";
import type { ChannelModel, ConfirmChannel, ConsumeMessage, Message } from "amqplib";
import type { LinkDelivery, PublishRequest } from "../link.js";
import { directReplyTo } from "../names.js";
import { unroutable } from "../topology/refusal.js";
import { contentBuffer, linkProperties, publishOptions } from "./properties.js";
import { type AwaitingReturn, matchReturn } from "./returns.js";
import { brokerFailure } from "./serverError.js";

/**
 * The connection's publishing channel, in confirm mode: a publish resolves on the server's ack and
 * rejects on its nack. With `mandatory`, the server returns a message it could route nowhere before
 * it acks it (matched to its publish as `matchReturn` says).
 * The channel also consumes direct reply-to, so the requests it publishes get their replies here.
 */
export class PublishChannel {
  readonly #channel: ConfirmChannel;
  readonly #pending = new Set<AwaitingReturn>();
  #closed: Error | undefined;

  private constructor(channel: ConfirmChannel) {
    this.#channel = channel;
    channel.on("return", (message: Message) => matchReturn(this.#pending, message));
    channel.on("error", (error: Error) => {
      this.#closed ??= error;
    });
    channel.on("close", () => {
      this.#closed ??= new Error("the channel closed");
    });
  }

  static async open(
    model: ChannelModel,
    onReply: ((reply: LinkDelivery) => void) | undefined,
  ): Promise<PublishChannel> {
    const channel = await model.createConfirmChannel();
    const opened = new PublishChannel(channel);
    if (onReply !== undefined) {
      await channel.consume(
        directReplyTo,
        (message) => {
          if (message !== null) onReply(replyDelivery(message));
        },
        { noAck: true },
      );
    }
    return opened;
  }

  get closed(): boolean {
    return this.#closed !== undefined;
  }

  publish(request: PublishRequest): Promise<void> {
    if (this.#closed !== undefined) {
      return Promise.reject(brokerFailure("publishing to RabbitMQ", this.#closed));
    }
    const entry: AwaitingReturn = { request, returned: undefined };
    this.#pending.add(entry);
    return new Promise<void>((resolve, reject) => {
      this.#channel.publish(
        request.exchange,
        request.routingKey,
        contentBuffer(request.content),
        publishOptions(request),
        (error: unknown) => {
          this.#pending.delete(entry);
          if (error !== null && error !== undefined) {
            reject(
              this.#closed === undefined
                ? new RustStreamError(
                    "broker-failure",
                    `RabbitMQ refused the message for exchange "${request.exchange}" with routing key "${request.routingKey}" (a nack: the server could not take it, a queue over its limit with reject-publish, say)`,
                  )
                : brokerFailure(
                    `the channel closed before RabbitMQ confirmed the message for exchange "${request.exchange}" with routing key "${request.routingKey}"; it may or may not have been stored`,
                    this.#closed,
                  ),
            );
          } else if (entry.returned !== undefined) {
            reject(unroutable(request.exchange, request.routingKey, entry.returned));
          } else {
            resolve();
          }
        },
      );
    });
  }

  async close(): Promise<void> {
    await this.#channel.close().catch(() => {});
  }
}

/** A reply: consumed without acks, so settling it is nothing. */
function replyDelivery(message: ConsumeMessage): LinkDelivery {
  return {
    queue: directReplyTo,
    exchange: message.fields.exchange,
    routingKey: message.fields.routingKey,
    content: message.content,
    properties: linkProperties(message),
    redelivered: message.fields.redelivered,
    ack: () => {},
    reject: () => {},
  };
}
