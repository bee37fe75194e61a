import { type Delivery, RustStreamError, type SeekableSubscription } from "@ruststream/core";
import { seekMark } from "@ruststream/core/broker";
import type { RabbitHost } from "../host.js";
import {
  isRabbitStreamSeekPosition,
  parseRabbitStreamPosition,
  type RabbitStreamSeekPosition,
  RabbitStreamTimePosition,
} from "../position.js";
import { QueueSubscription, type QueueSubscriptionOptions } from "../queue/queueSubscription.js";
import { streamOffsetArgument } from "../topology/streamOffset.js";

/**
 * A subscription to a stream queue: a queue subscription (one consumer with its prefetch, which is
 * a stream's credit) that seeks. A seek cancels the consumer and consumes again from the offset or
 * time (`x-stream-offset`): what the old consumer handed over and nobody pulled is dropped, and
 * what was handed out settles nothing (a stream keeps every message whatever its readers do). An
 * offset is checked against what the stream holds first: the server starts a consumer at an offset
 * it no longer keeps, or has not written, at the nearest one it has without a word.
 */
export class StreamSubscription
  extends QueueSubscription
  implements SeekableSubscription<Delivery<RabbitStreamSeekPosition>>
{
  readonly [seekMark] = true as const;

  static async open(
    host: RabbitHost,
    options: QueueSubscriptionOptions,
  ): Promise<StreamSubscription> {
    const subscription = new StreamSubscription(host, options);
    await subscription.consumeWith(options.arguments);
    return subscription;
  }

  async seek(position: RabbitStreamSeekPosition): Promise<void> {
    this.seekTo(position, isRabbitStreamSeekPosition, "a RabbitMQ stream position");
    if (position instanceof RabbitStreamTimePosition) {
      await this.consumeWith(streamOffsetArgument(position.time));
      return;
    }
    if (position.queue !== this.name) {
      throw new RustStreamError(
        "foreign-value",
        `seek() got a position in the stream "${position.queue}", and this subscription reads "${this.name}"`,
      );
    }
    const offset = position.offset!;
    const { first, next } = await this.host.link.streamBounds(this.name);
    this.assertOpen();
    if (offset < first || offset > next) {
      throw new RustStreamError(
        "unknown-position",
        first === next
          ? `the stream "${this.name}" holds nothing (its next offset is ${next}): offset ${offset} was evicted or never written`
          : `the stream "${this.name}" holds offsets ${first} to ${next - 1n}: offset ${offset} was evicted or never written`,
      );
    }
    await this.consumeWith(streamOffsetArgument(offset));
  }

  parsePosition(text: string): RabbitStreamSeekPosition {
    return parseRabbitStreamPosition(text);
  }
}
