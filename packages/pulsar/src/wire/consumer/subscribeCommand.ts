// The SUBSCRIBE a partition consumer sends: its options in the protocol's terms.
import { CommandType, InitialPosition, KeySharedMode, SubType } from "../commands/enums.js";
import type { BaseCommand, KeySharedMeta } from "../commands/shapes.js";
import { toKeyValues } from "../keyValues.js";
import type { ConsumerOptions } from "./consumerOptions.js";

export interface SubscribeIds {
  /** The topic, or the partition's name. */
  readonly topic: string;
  readonly consumerId: number;
  readonly requestId: number;
  /** Raised by every rewind the consumer asked for (see PartitionConsumer.redeliverAll). */
  readonly consumerEpoch: bigint;
}

export function subscribeCommand(options: ConsumerOptions, ids: SubscribeIds): BaseCommand {
  const o = options;
  const subType = SubType[o.subscriptionType ?? "Exclusive"];
  let keySharedMeta: KeySharedMeta | undefined;
  if (subType === SubType.Key_Shared) {
    keySharedMeta = { keySharedMode: KeySharedMode[o.keyShared?.mode ?? "AUTO_SPLIT"] };
    if (o.keyShared?.hashRanges)
      keySharedMeta.hashRanges = o.keyShared.hashRanges.map((r) => ({ ...r }));
    if (o.keyShared?.allowOutOfOrderDelivery !== undefined)
      keySharedMeta.allowOutOfOrderDelivery = o.keyShared.allowOutOfOrderDelivery;
  }
  const metadata = toKeyValues(o.properties);
  const subscriptionProperties = toKeyValues(o.subscriptionProperties);
  return {
    type: CommandType.SUBSCRIBE,
    subscribe: {
      topic: ids.topic,
      subscription: o.subscription,
      subType,
      consumerId: ids.consumerId,
      requestId: ids.requestId,
      ...(o.consumerName === undefined ? {} : { consumerName: o.consumerName }),
      ...(o.priorityLevel === undefined ? {} : { priorityLevel: o.priorityLevel }),
      durable: o.durable ?? true,
      ...(metadata === undefined ? {} : { metadata }),
      ...(o.readCompacted === undefined ? {} : { readCompacted: o.readCompacted }),
      initialPosition:
        o.initialPosition === "earliest" ? InitialPosition.Earliest : InitialPosition.Latest,
      ...(keySharedMeta === undefined ? {} : { keySharedMeta }),
      ...(subscriptionProperties === undefined ? {} : { subscriptionProperties }),
      consumerEpoch: ids.consumerEpoch,
    },
  };
}
