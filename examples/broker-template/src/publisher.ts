import {
  type OutgoingMessage,
  type Publisher,
  type Receipt,
  RustStreamError,
} from "@ruststream/core";
import { assertPayloadBytes, type brokerMark, wireHeaders } from "@ruststream/core/broker";
import { channelHeaderNames } from "./names.js";
import type { Frame } from "./wire/link.js";

/**
 * What a publisher needs from its connection. Declared here and implemented by the connected
 * broker, so this file never imports the connection: no cycle between a connection and its publisher.
 */
export interface PublisherHost {
  readonly [brokerMark]: string;
  readonly maxMessageBytes: number;
  assertOpen(): void;
  /** Sends a frame (and, in-process, records it for `published()`). */
  send(frame: Frame): void;
}

/** A live publisher: each publish is sent when it returns, as a fire-and-forget wire confirms. */
export class ChannelPublisher implements Publisher {
  readonly #host: PublisherHost;

  constructor(host: PublisherHost) {
    this.#host = host;
  }

  async publish(message: OutgoingMessage): Promise<Receipt> {
    this.#host.assertOpen();
    this.#host.send(frameOf(message, this.#host.maxMessageBytes));
    return { name: message.name };
  }
}

/**
 * The frame a message goes out as, or the refusal, before anything is sent: what every publish
 * and every in-process injection go through, so both refuse the same messages.
 */
export function frameOf(message: OutgoingMessage, maxMessageBytes: number): Frame {
  assertPayloadBytes(message);
  if (typeof message.name !== "string" || message.name === "") {
    throw new RustStreamError("invalid-argument", "publish() needs a non-empty channel name");
  }
  if (message.options !== undefined) {
    throw new RustStreamError(
      "unsupported",
      "the channel broker has no per-message publish options: remove options from the message",
    );
  }
  if (message.payload.length > maxMessageBytes) {
    throw new RustStreamError(
      "publish-refused",
      `a payload of ${message.payload.length} bytes for "${message.name}" is over maxMessageBytes (${maxMessageBytes}); raise it in the ChannelBroker options`,
    );
  }
  // Copied now: the caller may reuse its buffers once the publish resolves.
  return {
    channel: message.name,
    payload: message.payload.slice(),
    headers: wireHeaders(message, channelHeaderNames.partitionKey),
  };
}
