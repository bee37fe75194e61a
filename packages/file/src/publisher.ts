import type { OutgoingMessage, Publisher, PublishPolicy, Receipt } from "@ruststream/core";
import { policyMark } from "@ruststream/core/broker";
import type { ConnectedFileBroker } from "./broker.js";

/**
 * Publishing to the broker's file: the message name is the stream key. Configuration only; the
 * file's writer (and its cross-process lock) is taken on the first publish, so a service that
 * only reads never holds it.
 */
export class FilePublish implements PublishPolicy<ConnectedFileBroker, FilePublisher> {
  readonly [policyMark] = "file";

  async pair(connected: ConnectedFileBroker): Promise<FilePublisher> {
    connected.assertOpen();
    return new FilePublisher(connected);
  }
}

/**
 * Appends to the file. A publish resolves once the bytes are handed to the operating system, so
 * readers (in this process or another) see them; the receipt's position is the message's sequence
 * number in its stream. Durability (fsync) comes with the broker's shutdown.
 */
export class FilePublisher implements Publisher {
  readonly #connected: ConnectedFileBroker;

  constructor(connected: ConnectedFileBroker) {
    this.#connected = connected;
  }

  async publish(message: OutgoingMessage): Promise<Receipt> {
    return this.#connected.append(message);
  }
}
