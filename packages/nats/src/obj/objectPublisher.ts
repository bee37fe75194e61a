import {
  type OutgoingMessage,
  type Publisher,
  type Receipt,
  RustStreamError,
} from "@ruststream/core";
import { assertPayloadBytes } from "@ruststream/core/broker";
import { type NatsObjectInfo, parseObjectInfo } from "../client/objectMeta.js";
import { storeMessage } from "../jetStreamPublisher.js";
import {
  checkObjectName,
  kvHeaders,
  objChunkSubject,
  objMetaSubject,
  objStream,
} from "../names.js";
import { JetStreamPosition } from "../position.js";
import type { PublisherHost } from "../publisher.js";

/** What an object put resolves with: the object's info and the revision that stored it. */
export interface NatsObjectReceipt extends Receipt {
  readonly info: NatsObjectInfo;
  readonly revision: bigint;
}

/**
 * Puts objects into one object store, and deletes them: a publish's name is the object's, its
 * payload the content (chunked as the clients chunk it), replacing an object of that name. An object carries no
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
    return this.#receipt(name, info, revision);
  }

  /**
   * Deletes the object `name` as the object store clients do: its info written again marked
   * deleted (no size, chunks or digest; a rollup of the older infos), then its chunks purged.
   * Resolves with the deleted info's receipt, or `undefined` when the store holds no object of
   * that name to delete (never put, or deleted already).
   */
  async delete(name: string): Promise<NatsObjectReceipt | undefined> {
    this.#host.assertOpen();
    checkObjectName(name, "an object delete");
    const stream = objStream(this.#bucket);
    const subject = objMetaSubject(this.#bucket, name);
    const last = await this.#host.link.message(stream, { lastOn: subject });
    if (last === undefined) return undefined;
    // The info as stored, every field kept (the clients write more than this package reads).
    const current = parseObjectInfo(last.payload);
    if (current.deleted === true) return undefined;
    const info: NatsObjectInfo = { ...current, deleted: true, size: 0, chunks: 0, digest: "" };
    const receipt = await storeMessage(
      this.#host,
      { name: subject, payload: new TextEncoder().encode(JSON.stringify(info)) },
      [[kvHeaders.rollup, "sub"]],
    );
    await this.#host.link.purgeSubject(stream, objChunkSubject(this.#bucket, current.nuid));
    return this.#receipt(name, info, receipt.sequence);
  }

  #receipt(name: string, info: NatsObjectInfo, revision: bigint): NatsObjectReceipt {
    return {
      name,
      position: new JetStreamPosition(objStream(this.#bucket), revision).toString(),
      info,
      revision,
    };
  }
}
