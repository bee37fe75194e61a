import { HeaderMap, type ReadonlyHeaderMap, type SettleResult } from "@ruststream/core";
import { DeliveryBase } from "@ruststream/core/broker";
import { PARTITION_KEY_HEADER, SEQUENCE_HEADER } from "../names.js";
import { FilePosition } from "../position.js";
import type { DecodedMessage } from "../wire/format/types.js";
import { unwrapFrame } from "../wire/transactionMark.js";
import type { DeliveryOrigin } from "./copyOrigin.js";

/** What a delivery asks of the subscription that handed it out. */
export interface DeliveryOwner {
  /** Answers for a named consumer; `unsupported` for an unnamed one. Throws `closed` after shutdown. */
  settle(delivery: FileDelivery, verb: "ack" | "drop" | "requeue"): SettleResult;
}

/** A message of a `.ss` file, unwrapped from RustStream's header envelope when it has one. */
export class FileDelivery extends DeliveryBase<FilePosition> {
  readonly name: string;
  readonly payload: Uint8Array;
  readonly headers: ReadonlyHeaderMap;
  /**
   * The file has no counter of its own: `undefined` for an unnamed consumer. A named one counts its
   * own deliveries of the message, 1 as read from the file and one more each time a requeue serves
   * it again, so the runtime's attempt grows (that count starts over on a new client, as a read
   * from the stored position is a first delivery to it).
   */
  readonly redeliveryCount: number | undefined;
  readonly message: DecodedMessage;
  /** The subscription's generation when this was handed out: a seek makes it stale. */
  readonly generation: number;
  /** Counted for an in-process coordinator (released once, when settled for good). */
  counted: boolean;
  /**
   * For a named consumer, what a retry copy or dead letter of this message written into the same
   * file records as its origin, so a restart does not deliver the message again once it is there.
   */
  readonly copyOrigin: DeliveryOrigin | undefined;
  readonly #owner: DeliveryOwner;

  constructor(
    owner: DeliveryOwner,
    message: DecodedMessage,
    generation: number,
    counted: boolean,
    redeliveryCount: number | undefined,
    copyOrigin: DeliveryOrigin | undefined,
  ) {
    super();
    this.copyOrigin = copyOrigin;
    this.#owner = owner;
    this.message = message;
    this.generation = generation;
    this.counted = counted;
    this.redeliveryCount = redeliveryCount;
    this.name = message.streamKey;
    const { payload, headers } = unwrapFrame(message.payload);
    this.payload = payload;
    const all = headers.size === 0 ? new HeaderMap() : headers;
    all.set(SEQUENCE_HEADER, message.seq.toString());
    this.headers = all;
  }

  get seq(): bigint {
    return this.message.seq;
  }

  get partitionKey(): Uint8Array | undefined {
    return this.headers.get(PARTITION_KEY_HEADER);
  }

  get position(): FilePosition {
    return FilePosition.sequence(this.message.seq);
  }

  protected settleAck(): SettleResult {
    return this.#owner.settle(this, "ack");
  }

  protected settleNack(requeue: boolean): SettleResult {
    return this.#owner.settle(this, requeue ? "requeue" : "drop");
  }
}
