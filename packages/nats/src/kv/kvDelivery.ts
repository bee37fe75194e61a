import type { ReadonlyHeaderMap } from "@ruststream/core";
import type { Stored } from "../client/link.js";
import { JetStreamDelivery, type JetStreamDeliveryOwner } from "../jetstream/jetStreamDelivery.js";
import { kvHeaders } from "../names.js";

/** What a KV entry records: a value put, a key deleted, or a key purged (its history dropped). */
export type KvOperation = "put" | "delete" | "purge";

/**
 * A KV entry's operation, from the header the clients write on a marker; the marker the server
 * writes once a key's last entry ran out of time is a purge, as the KV clients read it.
 */
export function operationOf(message: { readonly headers: ReadonlyHeaderMap }): KvOperation {
  if (message.headers.getString(kvHeaders.markerReason) === "MaxAge") return "purge";
  const operation = message.headers.getString(kvHeaders.operation);
  return operation === "DEL" ? "delete" : operation === "PURGE" ? "purge" : "put";
}

/**
 * An entry a KV watch delivered: its bucket, key, revision (the bucket stream's sequence that
 * stored it, what a compare-and-set put expects) and operation. Its name is the key; its partition
 * key, as on a stream, the one the put carried (`nats-partition-key`). Settled as any JetStream
 * delivery: ack, `nak` (the server delivers it again), `term`.
 */
export class KvDelivery extends JetStreamDelivery {
  readonly bucket: string;
  readonly key: string;
  readonly operation: KvOperation;

  constructor(
    owner: JetStreamDeliveryOwner,
    message: Stored,
    now: number,
    bucket: string,
    operation: KvOperation,
  ) {
    super(owner, message, now);
    this.bucket = bucket;
    // "$KV." + bucket + "." before the key.
    this.key = message.subject.slice(bucket.length + 5);
    this.operation = operation;
  }

  override get name(): string {
    return this.key;
  }
  /** The bucket stream's sequence that stored this entry. */
  get revision(): bigint {
    return this.message.streamSequence;
  }
}
