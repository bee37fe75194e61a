import {
  HeaderMap,
  type OutgoingMessage,
  type Publisher,
  type RawMessage,
  type Receipt,
  type Requester,
  type RequestOptions,
  RustStreamError,
  type Transaction,
  type TransactionalPublisher,
} from "@ruststream/core";
import {
  assertPayloadBytes,
  type PendingReply,
  partitionKeyBytes,
  publishRequest,
  requestMark,
  stageTransaction,
  transactionsMark,
  writeDeadLetterOrigin,
} from "@ruststream/core/broker";
import type {
  Compression,
  ConfigValue,
  LinkProducer,
  Partitioner,
  ProducedRecord,
  ProducerSettings,
} from "./client/link.js";
import { partitionOfKey } from "./client/partitioners.js";
import { kafkaDeadLetterNames } from "./names.js";
import { KafkaPosition } from "./position.js";
import { KafkaDelivery } from "./topic/topicDelivery.js";
import type { TransactionLine } from "./transactions.js";

/** Per-message settings of a Kafka publish (`Publisher<KafkaPublishOptions>`). */
export interface KafkaPublishOptions {
  /** Write to this partition, whatever the key says. */
  readonly partition?: number;
}

/**
 * What a publisher is paired from: the producer settings of its policy (`KafkaPublish`, declared
 * in publishPolicy.ts, which imports this file and not the other way).
 */
export interface PolicySettings {
  readonly partitioner: Partitioner | undefined;
  readonly compression: Compression | undefined;
  /** Raw producer properties, in the order given (later ones win). */
  readonly properties: ReadonlyArray<readonly [string, ConfigValue]>;
  readonly transactionalId: string | undefined;
}

/**
 * What a publisher needs from its connection. Declared here and implemented by the connected broker,
 * so this file never imports connection.ts: no cycle between a connection and its publisher.
 */
export interface PublisherHost {
  /** Throws the `closed` error once the connection has shut down. */
  assertOpen(): void;
  readonly isClosed: boolean;
  closedError(what: string): RustStreamError;
  /** The producer for these settings (the broker's shared one for its defaults), opened once. */
  producer(settings: ProducerSettings): Promise<LinkProducer>;
  /** The broker's partitioner, for a policy that names none. */
  readonly partitioner: Partitioner;
  /** The largest record (key, value and headers) a publish may carry. */
  readonly maxMessageBytes: number;
  /** The partition count of a topic, cached; `undefined` for a topic the cluster does not have. */
  partitionsOf(topic: string, fresh: boolean): Promise<number | undefined>;
  /** Keeps a copy of what is published, on an in-process connection, for the test's `published()`. */
  record(message: RawMessage): void;
  /** Publishes sent and not yet confirmed, counted for the closed witness. */
  readonly inflight: { count: number };
  /** The broker's `transactionalId`, for a policy that names none. */
  readonly transactionalId: string | undefined;
  /** The line of transactions under `transactionalId` (its producer opened once, for these settings). */
  transactions(settings: ProducerSettings, transactionalId: string): TransactionLine;
  /** Waits for the reply correlated by `correlationId` on this connection's reply inbox. */
  awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply>;
}

const legalTopic = /^[a-zA-Z0-9._-]{1,249}$/;
const offsetOfPosition = /:(0|[1-9][0-9]*)$/;

/**
 * Publishes records and resolves on their delivery report. A message's partition key is the record
 * key; `options.partition` writes to one partition; a dead-lettered copy carries its origin in
 * RustStream's Kafka headers. A record over the size limit is refused before it is sent.
 *
 * Transactional too, given a transactional id: `transaction(work)` checks and stages each
 * `tx.publish` as it is made, and once `work` resolves produces them in one Kafka transaction on the
 * id's own producer (direct publishes keep the plain one), so read_committed readers see all of
 * them or none. Staging is what keeps transactions independent: Kafka allows one open transaction
 * per producer, and a second producer with the same id would fence the first.
 *
 * A requester too: `request` publishes with the connection's reply inbox as `reply-to` and waits
 * for the reply carrying its `correlation-id` (replyInbox.ts).
 */
export class KafkaPublisher
  implements
    Publisher<KafkaPublishOptions>,
    TransactionalPublisher<KafkaPublishOptions>,
    Requester<KafkaPublishOptions>
{
  readonly [transactionsMark] = true as const;
  readonly [requestMark] = true as const;
  readonly #host: PublisherHost;
  readonly #producer: LinkProducer;
  readonly #settings: ProducerSettings;
  readonly #transactionalId: string | undefined;

  constructor(
    host: PublisherHost,
    producer: LinkProducer,
    settings: ProducerSettings,
    transactionalId: string | undefined,
  ) {
    this.#host = host;
    this.#producer = producer;
    this.#settings = settings;
    this.#transactionalId = transactionalId;
  }

  /** Opens (or shares) the producer the policy asks for. */
  static async pair(host: PublisherHost, policy: PolicySettings): Promise<KafkaPublisher> {
    host.assertOpen();
    const settings: ProducerSettings = {
      partitioner: policy.partitioner ?? host.partitioner,
      compression: policy.compression,
      config: policy.properties,
    };
    const producer = await host.producer(settings);
    host.assertOpen();
    return new KafkaPublisher(
      host,
      producer,
      settings,
      policy.transactionalId ?? host.transactionalId,
    );
  }

  /**
   * Runs `work` in a transaction: commits what it published when it resolves, publishes nothing when
   * it throws (and rethrows). Transactions of one id commit one after another. Each `tx.publish`
   * resolves to nothing once its record is checked and staged: no record has a position (so no
   * receipt) before the commit.
   */
  async transaction<T>(work: (tx: Transaction<KafkaPublishOptions>) => Promise<T>): Promise<T> {
    this.#host.assertOpen();
    const transactionalId = this.#transactionalId;
    if (transactionalId === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        "Kafka transactions need a transactional id: give KafkaBroker a transactionalId option, or the publish policy one (new KafkaPublish({ transactionalId })); keep it stable for one instance of the service and unique among running instances",
      );
    }
    const staged: Array<{ record: ProducedRecord; raw: RawMessage }> = [];
    const result = await stageTransaction(work, (message) => {
      staged.push(this.prepare(message));
    });
    // Checked again: the connection may have shut down while `work` ran.
    this.#host.assertOpen();
    if (staged.length === 0) return result;
    for (const { record } of staged) {
      if (record.partition !== undefined)
        await this.#checkPartition(record.topic, record.partition);
    }
    const topics = [...new Set(staged.map((s) => s.record.topic))].join('", "');
    try {
      await this.#host
        .transactions(this.#settings, transactionalId)
        .commit(staged.map((s) => s.record));
    } catch (error) {
      throw this.#failure(error, topics);
    }
    for (const { raw } of staged) this.#host.record(raw);
    return result;
  }

  async request(
    message: OutgoingMessage<KafkaPublishOptions>,
    options: RequestOptions,
  ): Promise<RawMessage> {
    this.#host.assertOpen();
    return publishRequest(
      message,
      (correlationId) => this.#host.awaitReply(correlationId, options.timeoutMs),
      // Sent now, also on behalf of a delivery of a `transactional` subscription: staged for its
      // window's commit, which waits for the handler, it would go out only after its reply was due.
      (request) => this.#send(request, false),
      options,
    );
  }

  publish(message: OutgoingMessage<KafkaPublishOptions>): Promise<Receipt> {
    return this.#send(message, true);
  }

  async #send(message: OutgoingMessage<KafkaPublishOptions>, stageable: boolean): Promise<Receipt> {
    const { record, raw } = this.prepare(message);
    if (record.partition !== undefined) await this.#checkPartition(record.topic, record.partition);
    // Published on behalf of a delivery of a `transactional` subscription: it goes out in the
    // transaction that commits that delivery's offset, not now.
    const cause = message.cause;
    if (stageable && cause instanceof KafkaDelivery && cause.stagesOutputs) {
      if (cause.stage(await this.#placedForWindow(record), raw)) return { name: message.name };
    }
    this.#host.record(raw);
    this.#host.inflight.count++;
    try {
      const report = await this.#producer.send(record);
      return {
        name: message.name,
        position: KafkaPosition.offset(record.topic, report.partition, report.offset).toString(),
      };
    } catch (error) {
      throw this.#failure(error, message.name);
    } finally {
      this.#host.inflight.count--;
    }
  }

  /**
   * The record a publish sends, checked as `publish` checks it, built from copies so the caller may
   * reuse its buffers: for the in-process inject, which must refuse exactly what a publish refuses.
   */
  prepare(message: OutgoingMessage<KafkaPublishOptions>): {
    record: ProducedRecord;
    raw: RawMessage;
  } {
    this.#host.assertOpen();
    const topic = message.name;
    if (typeof topic !== "string" || !legalTopic.test(topic) || topic === "." || topic === "..") {
      throw new RustStreamError(
        "invalid-argument",
        `"${String(topic)}" is not a legal Kafka topic name: use up to 249 letters, digits, ".", "_" and "-"`,
      );
    }
    assertPayloadBytes(message);
    const partition = partitionOption(message.options);
    const headers = message.headers?.clone() ?? new HeaderMap();
    const origin = message.deadLetterOrigin;
    if (origin !== undefined) {
      const offset = origin.position === undefined ? undefined : offsetOf(origin.position);
      writeDeadLetterOrigin(
        headers,
        { ...origin, ...(offset === undefined ? {} : { position: offset }) },
        kafkaDeadLetterNames,
      );
    }
    const key =
      message.partitionKey === undefined
        ? undefined
        : partitionKeyBytes(message.partitionKey).slice();
    const value = message.payload.slice();
    const wire: Array<readonly [string, Uint8Array]> = [...headers];
    let size = value.length + (key?.length ?? 0);
    for (const [name, bytes] of wire) size += Buffer.byteLength(name) + bytes.length;
    const limit = this.#host.maxMessageBytes;
    if (size > limit) {
      throw new RustStreamError(
        "publish-refused",
        `a record of ${size} bytes (key, value and headers) for "${topic}" is over the Kafka broker's maxMessageBytes (${limit}); raise maxMessageBytes on the KafkaBroker (and the topic's max.message.bytes on the cluster), or send a smaller message`,
      );
    }
    return {
      record: { topic, partition, key, value, headers: wire },
      raw: { name: topic, payload: value, headers, partitionKey: key },
    };
  }

  /**
   * An output staged for a transactional subscription goes out on that subscription's producer,
   * which the broker opened with its own partitioner (connection.ts, `subscribe`) and which carries the
   * outputs of every publisher in one transaction. Where this policy names another partitioner, the
   * partition of a keyed output is picked here, by the function the engines' partitioners share,
   * so it lands where a direct publish of this policy puts it.
   */
  async #placedForWindow(record: ProducedRecord): Promise<ProducedRecord> {
    const partitioner = this.#settings.partitioner;
    if (
      record.partition !== undefined ||
      record.key === undefined ||
      partitioner === this.#host.partitioner
    ) {
      return record;
    }
    const count = await this.#host.partitionsOf(record.topic, false);
    if (count === undefined) {
      throw new RustStreamError(
        "publish-refused",
        `topic "${record.topic}" does not exist yet, and this output of a transactional subscription is placed by its policy's partitioner ("${partitioner}", not the broker's "${this.#host.partitioner}"), which needs the topic's partition count: create the topic first, or publish with the broker's partitioner`,
      );
    }
    return { ...record, partition: partitionOfKey(partitioner, record.key, count) };
  }

  async #checkPartition(topic: string, partition: number): Promise<void> {
    let count = await this.#host.partitionsOf(topic, false);
    if (count === undefined || partition >= count)
      count = await this.#host.partitionsOf(topic, true);
    if (count === undefined || partition >= count) {
      throw new RustStreamError(
        "publish-refused",
        `options.partition ${partition}: topic "${topic}" ${count === undefined ? "does not exist" : `has ${count} partition${count === 1 ? "" : "s"} (0 to ${count - 1})`}`,
      );
    }
  }

  #failure(error: unknown, topic: string): Error {
    if (this.#host.isClosed) return this.#host.closedError("publisher");
    if (error instanceof RustStreamError) return error;
    const code = (error as { code?: unknown; type?: unknown }).code;
    const type = (error as { type?: unknown }).type;
    // Too large for the client or the cluster: no retry can succeed.
    if (code === 10 || type === "MESSAGE_TOO_LARGE") {
      return new RustStreamError(
        "publish-refused",
        `Kafka refused the record for "${topic}" as too large: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return new RustStreamError(
      "broker-failure",
      `Kafka refused the publish to "${topic}": ${(error as Error).message}`,
      { cause: error },
    );
  }
}

function partitionOption(options: KafkaPublishOptions | undefined): number | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== "object" || options === null) {
    throw new RustStreamError(
      "invalid-argument",
      "publish options for Kafka are an object: { partition }",
    );
  }
  const unknown = Object.keys(options).filter((k) => k !== "partition");
  if (unknown.length > 0) {
    throw new RustStreamError(
      "unsupported",
      `the Kafka broker has no publish option ${unknown.map((k) => `"${k}"`).join(", ")}: it takes { partition }`,
    );
  }
  const partition = options.partition;
  if (partition === undefined) return undefined;
  if (!Number.isSafeInteger(partition) || partition < 0 || partition > 0x7fffffff) {
    throw new RustStreamError(
      "invalid-argument",
      `options.partition: ${String(partition)}; give a partition number, 0 or more`,
    );
  }
  return partition;
}

/** The offset a stored position names (`topic:partition:offset`), or the text itself. */
function offsetOf(position: string): string {
  return offsetOfPosition.exec(position)?.[1] ?? position;
}
