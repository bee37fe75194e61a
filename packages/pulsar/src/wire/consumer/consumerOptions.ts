// What a consumer is asked for: the subscription and how it reads.
import type { KeySharedMode, SubType } from "../commands/enums.js";
import type { UndecodableHandler } from "../undecodable.js";

export type SubscriptionType = keyof typeof SubType;

/** Where a new subscription starts; an existing one keeps its cursor. */
export type InitialPosition = "latest" | "earliest";

export interface ConsumerOptions {
  readonly topic: string;
  readonly subscription: string;
  /** Default Exclusive, as in the Java client. */
  readonly subscriptionType?: SubscriptionType;
  readonly consumerName?: string;
  /** Messages the broker may push ahead, per partition (default 1000). */
  readonly receiverQueueSize?: number;
  /** Where a new subscription starts (default latest). */
  readonly initialPosition?: InitialPosition;
  /** Key_Shared settings (default AUTO_SPLIT, in-order delivery). */
  readonly keyShared?: {
    readonly mode?: keyof typeof KeySharedMode;
    readonly hashRanges?: readonly { readonly start: number; readonly end: number }[];
    readonly allowOutOfOrderDelivery?: boolean;
  };
  /** False for a non-durable subscription, which the broker forgets when its consumers leave. */
  readonly durable?: boolean;
  readonly readCompacted?: boolean;
  readonly priorityLevel?: number;
  /** How long a nacked message waits before its redelivery is asked for (default 0: at once). */
  readonly negativeAckDelayMs?: number;
  /** Consumer metadata, shown in the topic's stats. */
  readonly properties?: Readonly<Record<string, string>>;
  readonly subscriptionProperties?: Readonly<Record<string, string>>;
  /**
   * Where entries that cannot be decoded (checksum, decompression, batch) go before they are
   * acked: a dead letter. Without it they are acked with the validation error, as Pulsar's Java
   * client does. Either way each is logged at error with its message id and the reason.
   */
  readonly undecodable?: UndecodableHandler;
}
