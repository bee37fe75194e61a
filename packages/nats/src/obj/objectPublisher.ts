import {
  type OutgoingMessage,
  type Publisher,
  type Receipt,
  RustStreamError,
} from "@ruststream/core";
import { assertPayloadBytes } from "@ruststream/core/broker";
import type { NatsObjectInfo } from "../client/objectMeta.js";
import { checkObjectName } from "../names.js";
import { JetStreamPosition } from "../position.js";
import type { PublisherHost } from "../publisher.js";

/** What an object put resolves with: the object's info and the revision that stored it. */
export interface NatsObjectReceipt extends Receipt {
  readonly info: NatsObjectInfo;
  readonly revision: bigint;
}

/**
 * Puts objects into one object store: a publish's name is the object's, its payload the content
 * (chunked as the clients chunk it), replacing an object of that name. An object carries no
 * headers, partition key or options here: refused (`unsupported`) rather than dropped.
 */
export class ObjectPublisher implements Publisher {
  readonly #host: PublisherHost;
  readonly #bucket: string;

  constructor(host: PublisherHost, bucket: string) {
    this.#host = host;
    this.#bucket = bucket;
  }

  async publish(message: OutgoingMessage): Promise<NatsObjectReceipt> {
    this.#host.assertOpen();
    assertPayloadBytes(message);
    const name = checkObjectName(message.name, "an object put");
    const headers = message.headers?.size ?? 0;
    if (headers > 0 || message.partitionKey !== undefined || message.options !== undefined) {
      throw new RustStreamError(
        "unsupported",
        `an object put to "${this.#bucket}" carries its name and content only: no headers, partition key or options`,
      );
    }
    const { info, revision } = await this.#host.link.putObject(
      this.#bucket,
      name,
      message.payload.slice(),
    );
    return {
      name,
      position: new JetStreamPosition(`OBJ_${this.#bucket}`, revision).toString(),
      info,
      revision,
    };
  }
}
