// What the runner tells a service process, passed as one JSON argument.

/** The retry and dead-letter path: some messages are delayed once, some always fail. */
export interface RetryPlan {
  /** Messages whose seq is a multiple of this answer `retryAfter(delayMs)` on their first attempt. */
  readonly delayEvery: number;
  readonly delayMs: number;
  /** Messages whose seq % failEvery === 1 always throw: dead-lettered after maxAttempts. */
  readonly failEvery: number;
  readonly maxAttempts: number;
  readonly deadLetter: string;
  /**
   * Who moves a message to the dead letter: `runtime`, the cap and dead letter declared on the
   * mount (the runtime publishes, then acks the original; or, on a source whose server moves it, a
   * RabbitMQ quorum queue or a PostgreSQL queue, the runtime declares both to the source), or, on a
   * Redis stream, `broker`: `retry` on the source (append and ack in one transaction).
   */
  readonly deadLetterBy: "runtime" | "broker";
  /**
   * The subscriber's longest backoff (default 10 s): also how long the runtime waits before it
   * publishes again a retry copy or dead letter that failed to publish. A thrown error's own
   * backoffs under `maxAttempts(3)` (100 ms, 200 ms) never reach it.
   */
  readonly backoffMaxMs?: number;
}

export interface ServiceConfig {
  readonly broker:
    | "file"
    | "redis-stream"
    | "redis-list"
    | "pulsar-shared"
    | "pulsar-key-shared"
    | "kafka-tracked"
    | "kafka-transactional"
    | "nats-jetstream"
    | "nats-core-request"
    | "nats-core-publish"
    | "nats-core-fanout"
    | "nats-partitioned"
    | "rabbitmq-quorum"
    | "rabbitmq-classic"
    | "rabbitmq-stream"
    | "postgres-queue";
  /**
   * The stream file's path, the Redis, Pulsar, NATS, AMQP or PostgreSQL URL (the fault proxy's,
   * where there is one), or Kafka's bootstrap list or the NATS cluster's (comma-separated).
   */
  readonly address: string;
  readonly key: string;
  /**
   * The app's name: the Redis group, the file's consumer name, the Pulsar subscription, the Kafka
   * consumer group, the JetStream durable consumer, the core NATS queue group (none under
   * `nats-core-fanout`: each replica subscribes on its own).
   */
  readonly group: string;
  /** Work per message, so faults land with messages under way. */
  readonly workMs: number;
  readonly retry?: RetryPlan;
  /** A PostgreSQL queue's `keyOrder` (default: on without a retry plan, off with one). */
  readonly keyOrder?: boolean;
  /**
   * A PostgreSQL queue's `transactional`: the handler writes a business row in the claim's
   * transaction, and the ack (which keeps the row, marked done) commits with it.
   */
  readonly transactional?: boolean;
}

/** A failing message of the plan: `seq % failEvery === 1`. */
export const alwaysFails = (plan: RetryPlan, seq: number): boolean => seq % plan.failEvery === 1;

/** A message of the plan delayed once: a multiple of `delayEvery` that does not always fail. */
export const delayedOnce = (plan: RetryPlan, seq: number): boolean =>
  seq % plan.delayEvery === 0 && !alwaysFails(plan, seq);
