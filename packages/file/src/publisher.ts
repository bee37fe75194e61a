import type { OutgoingMessage, Publisher, Receipt } from "@ruststream/core";
import type { brokerMark } from "@ruststream/core/broker";

/**
 * What a publisher needs from its connection. Declared here and implemented by
 * `ConnectedFileBroker`, so this file never imports the connection: no cycle between a connection and
 * its publisher.
 */
export interface PublisherHost {
  readonly [brokerMark]: string;
  /** Throws `closed` once the connection has shut down. */
  assertOpen(): void;
  /** Validates, encodes and appends one message; resolves once its bytes are handed to the OS. */
  append(message: OutgoingMessage): Promise<Receipt>;
}

/**
 * Appends to the file. A publish resolves once the bytes are handed to the operating system, so
 * readers (in this process or another) see them; the receipt's position is the message's sequence
 * number in its stream. Durability (fsync) comes with the broker's shutdown.
 */
export class FilePublisher implements Publisher {
  readonly #host: PublisherHost;

  constructor(host: PublisherHost) {
    this.#host = host;
  }

  async publish(message: OutgoingMessage): Promise<Receipt> {
    return this.#host.append(message);
  }
}
