import type { OutgoingMessage, Publisher } from "@ruststream/core";
import type { PubAck } from "./client/link.js";
import { JetStreamPosition } from "./position.js";
import {
  frameOf,
  type NatsPublishOptions,
  type NatsReceipt,
  type PublisherHost,
} from "./publisher.js";

/**
 * A live JetStream publisher: each publish resolves on the stream's acknowledgement, with where it
 * stored the message and whether the message id made it a duplicate. No requests: on a subject a
 * stream stores, the stream itself would answer one with its acknowledgement.
 */
export class JetStreamPublisher implements Publisher<NatsPublishOptions> {
  readonly #host: PublisherHost;

  constructor(host: PublisherHost) {
    this.#host = host;
  }

  async publish(message: OutgoingMessage<NatsPublishOptions>): Promise<NatsReceipt> {
    this.#host.assertOpen();
    const frame = frameOf(message, this.#host.link.maxPayload, true);
    this.#host.sent(frame);
    let ack: PubAck;
    try {
      ack = await this.#host.link.publishStored(frame);
    } catch (error) {
      this.#host.assertOpen();
      throw error;
    }
    return {
      name: message.name,
      position: new JetStreamPosition(ack.stream, ack.sequence).toString(),
      stream: ack.stream,
      sequence: ack.sequence,
      duplicate: ack.duplicate,
    };
  }
}
