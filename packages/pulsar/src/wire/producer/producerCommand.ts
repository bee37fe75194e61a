// The PRODUCER command a partition producer attaches with: its options in the protocol's terms.
import { CommandType, ProducerAccessMode } from "../commands/enums.js";
import type { BaseCommand } from "../commands/shapes.js";
import { toKeyValues } from "../keyValues.js";
import type { ProducerOptions } from "./producerOptions.js";

export interface ProducerIds {
  /** The topic, or the partition's name. */
  readonly topic: string;
  readonly producerId: number;
  readonly requestId: number;
  /** The name the broker gave on an earlier attach, kept so deduplication keeps working. */
  readonly producerName: string | undefined;
  /** How many times it attached before (Pulsar's producer epoch, one higher on every reconnect). */
  readonly epoch: bigint;
}

export function producerCommand(options: ProducerOptions, ids: ProducerIds): BaseCommand {
  const metadata = toKeyValues(options.properties);
  return {
    type: CommandType.PRODUCER,
    producer: {
      topic: ids.topic,
      producerId: ids.producerId,
      requestId: ids.requestId,
      ...(ids.producerName === undefined ? {} : { producerName: ids.producerName }),
      userProvidedProducerName: options.producerName !== undefined,
      epoch: ids.epoch,
      producerAccessMode: ProducerAccessMode[options.accessMode ?? "Shared"],
      ...(options.initialSubscriptionName === undefined
        ? {}
        : { initialSubscriptionName: options.initialSubscriptionName }),
      ...(metadata === undefined ? {} : { metadata }),
    },
  };
}
