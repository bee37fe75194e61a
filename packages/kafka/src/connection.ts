import {
  type Clock,
  type ClosedBroker,
  type ConnectedBroker,
  type ConnectionListener,
  type DescribesServer,
  isRustStreamError,
  type OutgoingMessage,
  RustStreamError,
  type ServerDescription,
} from "@ruststream/core";
import {
  type Backlog,
  brokerMark,
  describeMark,
  type Injection,
  type PendingReply,
  type TeardownFacts,
  TestableConnection,
} from "@ruststream/core/broker";
import { checkAssignment, checkCommitMode, checkCompression } from "./client/engines.js";
import type { Link, LinkProducer, Partitioner, ProducerSettings } from "./client/link.js";
import type { KafkaHost } from "./host.js";
import type { InProcessLink } from "./inProcess/inProcessLink.js";
import { type BrokerSettings, describeKafkaServer } from "./options.js";
import { KafkaPublisher, type KafkaPublishOptions, type PublisherHost } from "./publisher.js";
import { KafkaPublish } from "./publishPolicy.js";
import { ReplyInbox } from "./replyInbox.js";
import { KafkaTopic } from "./sources.js";
import type { KafkaDelivery } from "./topic/topicDelivery.js";
import { KafkaTopicSubscription } from "./topic/topicSubscription.js";
import { TransactionLine } from "./transactions.js";

/**
 * What shutting down a Kafka connection left behind: `unflushed` counts records sent and not
 * confirmed by a delivery report within the flush timeout; the closed subscriptions' consumers left
 * their groups, and `returnedDeliveries` were handed out and never settled: not committed, so the
 * group reads them again.
 */
export type ClosedKafkaBroker = ClosedBroker;

interface ConnectionFacts {
  /** The group option, else the connecting app's name. */
  readonly group: string | undefined;
  /** The stand-in's link, on an in-process connection. */
  readonly inProcess: InProcessLink | undefined;
  /** Where request timeouts take time from. */
  readonly clock: Clock;
  readonly onState: ConnectionListener | undefined;
}

/** A connection to a Kafka cluster. */
export class ConnectedKafkaBroker
  extends TestableConnection<KafkaTopic, ClosedKafkaBroker, KafkaPublishOptions>
  implements
    ConnectedBroker<KafkaTopic, KafkaDelivery, KafkaPublisher, ClosedKafkaBroker>,
    DescribesServer,
    KafkaHost,
    PublisherHost
{
  readonly [brokerMark] = "kafka";
  readonly [describeMark] = true as const;
  readonly link: Link;
  readonly partitioner: Partitioner;
  readonly maxMessageBytes: number;
  readonly inflight = { count: 0 };
  /** What a new subscription to a bare name sees of earlier publishes: a new group starts at the end. */
  readonly backlog: Backlog = "missed";
  readonly #settings: BrokerSettings;
  readonly #facts: ConnectionFacts;
  readonly #producers = new Map<string, Promise<LinkProducer>>();
  readonly #transactionLines = new Map<string, TransactionLine>();
  readonly #partitionCounts = new Map<string, number>();
  readonly #inbox: ReplyInbox;

  constructor(link: Link, settings: BrokerSettings, facts: ConnectionFacts) {
    super(
      {
        label: "Kafka",
        accepts: "a name or a KafkaTopic",
        group: {
          noun: "consumer group",
          option: "group",
          broker: "KafkaBroker",
          descriptor: "KafkaTopic",
        },
      },
      facts.inProcess !== undefined,
      facts.onState,
    );
    this.link = link;
    link.states?.follow((change) => this.reportState(change));
    this.#settings = settings;
    this.#facts = facts;
    this.partitioner = settings.partitioner;
    this.maxMessageBytes = settings.maxMessageBytes;
    this.#inbox = new ReplyInbox(this, facts.clock, settings.replyTopic);
  }

  /** A bare name is a topic read by the broker's group; without one this says how to give it. */
  source(name: string): KafkaTopic {
    return new KafkaTopic(name, { group: this.groupOf(name, this.#facts.group) });
  }

  async subscribe(source: string | KafkaTopic): Promise<KafkaTopicSubscription> {
    this.assertOpen();
    const descriptor = this.descriptorOf(source);
    const group = this.groupOf(descriptor.name, descriptor.group ?? this.#facts.group);
    const commit = descriptor.commit ?? this.#settings.commit ?? "auto";
    const transactionalId = this.#settings.transactionalId;
    if (commit === "transactional" && transactionalId === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `KafkaTopic "${descriptor.name}" commits "transactional", which commits its offsets inside transactions: give KafkaBroker a transactionalId option (stable for this instance of the service, unique among running instances), or use commit "tracked"`,
      );
    }
    checkAssignment(this.#settings.connection.engine, descriptor.assignment);
    checkCommitMode(this.#settings.connection.engine, commit);
    let subscription: KafkaTopicSubscription;
    try {
      subscription = await KafkaTopicSubscription.open(this, descriptor, {
        group,
        commit,
        ...(commit === "transactional" && transactionalId !== undefined
          ? {
              // The broker's default producer settings: a publisher of the default policy shares
              // this line, so its own transactions and the windows commit one after another.
              line: this.transactions(
                { partitioner: this.partitioner, compression: undefined, config: [] },
                transactionalId,
              ),
            }
          : {}),
      });
    } catch (error) {
      if (this.isClosed) throw this.closedError("subscription");
      if (isRustStreamError(error)) throw error;
      throw new RustStreamError(
        "broker-failure",
        `subscribing to "${descriptor.name}" as group "${group}" failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return this.adopt(subscription);
  }

  defaultPublishPolicy(): KafkaPublish {
    return new KafkaPublish();
  }

  /** Used by {@link KafkaPublish.pair}. */
  pairPublisher(policy: KafkaPublish): Promise<KafkaPublisher> {
    this.assertOpen();
    checkCompression(this.#settings.connection.engine, policy.compression);
    return KafkaPublisher.pair(this, policy);
  }

  // PublisherHost

  producer(settings: ProducerSettings): Promise<LinkProducer> {
    this.assertOpen();
    const key = JSON.stringify(settings);
    let producer = this.#producers.get(key);
    if (producer === undefined) {
      producer = this.link.producer(settings);
      // A producer that failed to open is not kept: the next pairing tries again.
      producer.catch(() => this.#producers.delete(key));
      this.#producers.set(key, producer);
    }
    return producer;
  }

  get transactionalId(): string | undefined {
    return this.#settings.transactionalId;
  }

  transactions(settings: ProducerSettings, transactionalId: string): TransactionLine {
    this.assertOpen();
    const key = JSON.stringify(settings);
    let line = this.#transactionLines.get(transactionalId);
    if (line === undefined) {
      const producer = this.link.transactionalProducer(settings, transactionalId);
      // A producer that failed to open is not kept: the next transaction tries again.
      producer.catch(() => {
        if (this.#transactionLines.get(transactionalId) === line) {
          this.#transactionLines.delete(transactionalId);
        }
      });
      line = new TransactionLine(key, producer);
      this.#transactionLines.set(transactionalId, line);
    } else if (line.settings !== key) {
      throw new RustStreamError(
        "invalid-argument",
        `transactional id "${transactionalId}" is in use by a publish policy with other producer settings on this connection, and one id is one producer: give this policy a transactionalId of its own, or the same partitioner, compression and config`,
      );
    }
    return line;
  }

  async partitionsOf(topic: string, fresh: boolean): Promise<number | undefined> {
    if (!fresh) {
      const cached = this.#partitionCounts.get(topic);
      if (cached !== undefined) return cached;
    }
    const count = await this.link.admin.partitions(topic);
    if (count === undefined) this.#partitionCounts.delete(topic);
    else this.#partitionCounts.set(topic, count);
    return count;
  }

  awaitReply(correlationId: string, timeoutMs: number): Promise<PendingReply> {
    this.assertOpen();
    return this.#inbox.awaitReply(correlationId, timeoutMs);
  }

  // TestableConnection, on an in-process connection

  protected prepareInjection(message: OutgoingMessage<KafkaPublishOptions>): Injection {
    const engine = this.#facts.inProcess;
    if (engine === undefined) throw this.notInProcess("inject() works");
    const producer = engine.producerNow(this.partitioner);
    const { record, raw } = new KafkaPublisher(
      this,
      producer,
      {
        partitioner: this.partitioner,
        compression: undefined,
        config: [],
      },
      undefined,
    ).prepare(message);
    return { raw, deliver: () => producer.appendNow(record) };
  }

  /** The configured cluster, in-process too: docs generated under a test describe production. */
  describeServer(): ServerDescription {
    return describeKafkaServer(this.#settings.connection);
  }

  protected async teardown(): Promise<TeardownFacts<ClosedKafkaBroker>> {
    // Waiting requests fail now; the inbox's reader and topic go while the producers close.
    const inboxStopped = this.#inbox.stop(this.closedError("request"));
    let unflushed = 0;
    const producers = await Promise.all(
      [...this.#producers.values()].map((p) => p.catch(() => undefined)),
    );
    for (const producer of producers) {
      if (producer === undefined) continue;
      unflushed += await producer.flush(this.#settings.flushTimeoutMs);
      await producer.close();
    }
    // A transaction committing now finishes (bounded by the engine's own timeouts); none starts.
    await Promise.all([...this.#transactionLines.values()].map((line) => line.close()));
    this.#transactionLines.clear();
    // Before the engine closes: deleting the inbox's topic takes its admin connection.
    await inboxStopped;
    await this.link.close();
    return { unflushed };
  }
}
