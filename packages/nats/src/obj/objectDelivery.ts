import type { Stored } from "../client/link.js";
import { type NatsObjectInfo, parseObjectInfo } from "../client/objectMeta.js";
import { JetStreamDelivery, type JetStreamDeliveryOwner } from "../jetstream/jetStreamDelivery.js";

/**
 * An object store entry a watch delivered: the object's info is its payload (the handler's
 * message, JSON) and `info`; its content is read when asked, up to the watch's `maxBytes`. Its name
 * is the object's. Settled as any JetStream delivery.
 */
export class ObjectDelivery extends JetStreamDelivery {
  /** The entry's info, or why it is none (then the runtime settles it by the decode policy). */
  readonly #parsed: NatsObjectInfo | Error;
  readonly #read: (info: NatsObjectInfo) => Promise<Uint8Array>;

  constructor(
    owner: JetStreamDeliveryOwner,
    message: Stored,
    now: number,
    parsed: NatsObjectInfo | Error,
    read: (info: NatsObjectInfo) => Promise<Uint8Array>,
  ) {
    super(owner, message, now);
    this.#parsed = parsed;
    this.#read = read;
  }

  /** The object's info; throws for an entry that is not one (never handed to a handler). */
  get info(): NatsObjectInfo {
    if (this.#parsed instanceof Error) throw this.#parsed;
    return this.#parsed;
  }
  override get decodeError(): Error | undefined {
    return this.#parsed instanceof Error ? this.#parsed : super.decodeError;
  }
  override get name(): string {
    return this.#parsed instanceof Error ? this.message.subject : this.#parsed.name;
  }
  /** The store's stream sequence that stored this entry. */
  get revision(): bigint {
    return this.message.streamSequence;
  }

  /**
   * The object's content, this version's (by its unique id), checked against its size and digest.
   * Refused (`unsupported`) before a byte is read when it is over the watch's `maxBytes`; a
   * `broker-failure` when the version is gone (replaced or deleted since) or does not match.
   */
  async read(): Promise<Uint8Array> {
    return this.#read(this.info);
  }
}

/** The info of an entry, or the reason it is none (a delivery the decode policy settles). */
export function infoOf(message: Stored): NatsObjectInfo | Error {
  try {
    return parseObjectInfo(message.payload);
  } catch (error) {
    return error as Error;
  }
}
