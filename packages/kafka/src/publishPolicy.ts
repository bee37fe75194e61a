import { type Bindings, type PublishPolicy, RustStreamError } from "@ruststream/core";
import { type PolicyOwner, pairedHost, policyMark } from "@ruststream/core/broker";
import { checkedConfig, configEntries } from "./client/connectionOptions.js";
import type { Compression, ConfigValue, Partitioner } from "./client/link.js";
import type { KafkaPublisher } from "./publisher.js";

/** Who this policy pairs with, named when it is given another broker's connection. */
const owner: PolicyOwner = { kind: "kafka", label: "Kafka", broker: "KafkaBroker" };

export interface KafkaPublishSettings {
  /**
   * How keys map to partitions: `murmur2` (the Java client's, the broker's default) or
   * `consistent-random` (librdkafka's default, CRC32).
   */
  readonly partitioner?: Partitioner;
  /** Batch compression (default: the client's, none). kafkajs has only gzip built in. */
  readonly compression?: Compression;
  /** Raw producer properties for this policy's own producer, over the broker's. */
  readonly config?: Readonly<Record<string, ConfigValue>>;
  /**
   * The transactional id of this policy's transactions, over the broker's `transactionalId`. Stable
   * for one instance of a service and unique among running instances: a producer opening with an
   * id fences off any older one still using it.
   */
  readonly transactionalId?: string;
}

/**
 * The Kafka publish policy: plain configuration, paired with a connected broker into a
 * {@link KafkaPublisher}. `new KafkaPublish()` is the broker's default and shares the broker's
 * producer; a policy with its own settings opens its own.
 */
export class KafkaPublish implements PublishPolicy<object, KafkaPublisher> {
  readonly [policyMark] = "kafka";
  readonly partitioner: Partitioner | undefined;
  readonly compression: Compression | undefined;
  /** Raw producer properties, in the order given (later ones win). */
  readonly properties: ReadonlyArray<readonly [string, ConfigValue]>;
  readonly transactionalId: string | undefined;

  constructor(settings: KafkaPublishSettings = {}) {
    const partitioner = settings.partitioner;
    if (
      partitioner !== undefined &&
      partitioner !== "murmur2" &&
      partitioner !== "consistent-random"
    ) {
      throw new RustStreamError(
        "invalid-argument",
        `partitioner: "${String(partitioner)}"; give "murmur2" or "consistent-random"`,
      );
    }
    this.partitioner = partitioner;
    const compression = settings.compression;
    if (
      compression !== undefined &&
      !["none", "gzip", "snappy", "lz4", "zstd"].includes(compression)
    ) {
      throw new RustStreamError(
        "invalid-argument",
        `compression: "${String(compression)}"; give "none", "gzip", "snappy", "lz4" or "zstd"`,
      );
    }
    this.compression = compression;
    this.properties = configEntries("KafkaPublish", settings.config);
    this.transactionalId = checkTransactionalId("KafkaPublish", settings.transactionalId);
  }

  /** The same policy with one more raw producer property (applied last, so it wins). */
  config(key: string, value: ConfigValue): KafkaPublish {
    const entry = checkedConfig("KafkaPublish", key, value);
    return new KafkaPublish({
      ...(this.partitioner === undefined ? {} : { partitioner: this.partitioner }),
      ...(this.compression === undefined ? {} : { compression: this.compression }),
      ...(this.transactionalId === undefined ? {} : { transactionalId: this.transactionalId }),
      config: Object.fromEntries([...this.properties, entry]),
    });
  }

  get bindings(): Bindings {
    return {
      kafka: {
        ...(this.partitioner === undefined ? {} : { partitioner: this.partitioner }),
        ...(this.compression === undefined ? {} : { compression: this.compression }),
      },
    };
  }

  // Any connection, checked by its brand: naming the connection's class here would tie this file
  // to connection.ts and back.
  async pair(connected: object): Promise<KafkaPublisher> {
    return pairedHost<PairsKafkaPublishers>(connected, owner, "pairPublisher").pairPublisher(this);
  }
}

/** A Kafka connection, as the policy recognises it. */
interface PairsKafkaPublishers {
  pairPublisher(policy: KafkaPublish): Promise<KafkaPublisher>;
}

/** A transactional id as given, or `undefined`; an empty one is refused. */
export function checkTransactionalId(owner: string, id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  if (typeof id !== "string" || id.length === 0) {
    throw new RustStreamError(
      "invalid-argument",
      `${owner} transactionalId cannot be empty: give one stable for this instance of the service`,
    );
  }
  return id;
}
