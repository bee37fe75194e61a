import type { OutgoingMessage, Publisher, PublishPolicy, Receipt } from "@ruststream/core";
import { type brokerMark, type PolicyOwner, pairedHost, policyMark } from "@ruststream/core/broker";

/** Who this policy pairs with, named when it is given another broker's connection. */
const owner: PolicyOwner = { kind: "file", label: "file", broker: "FileBroker" };

/**
 * What a publisher needs from its connection. Declared here and implemented by
 * `ConnectedFileBroker`, so this file never imports the broker: no cycle between a connection and
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
 * Publishing to the broker's file: the message name is the stream key. Configuration only; the
 * file's writer (and its cross-process lock) is taken on the first publish, so a service that
 * only reads never holds it. It takes any connection and checks the brand, rather than naming the
 * connection's class, which would tie this file to broker.ts and back.
 */
export class FilePublish implements PublishPolicy<object, FilePublisher> {
  readonly [policyMark] = "file";

  async pair(connected: object): Promise<FilePublisher> {
    const host = pairedHost<PublisherHost>(connected, owner, "append");
    host.assertOpen();
    return new FilePublisher(host);
  }
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
