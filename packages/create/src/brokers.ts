/** The brokers a new service can start on: each is one of the repository's examples. */
export const brokerNames = [
  "file",
  "redis",
  "kafka",
  "pulsar",
  "nats",
  "rabbitmq",
  "postgres",
] as const;
export type BrokerName = (typeof brokerNames)[number];

/**
 * The Kafka client the broker runs on. kafkajs is the scaffold's default, unlike the package's
 * (librdkafka): it is plain JavaScript, so a new project installs anywhere without a native build.
 */
export const kafkaEngines = ["kafkajs", "librdkafka"] as const;
export type KafkaEngine = (typeof kafkaEngines)[number];

/** The engine's npm client: the one dependency a Kafka project keeps of the two. */
export const engineClient: Readonly<Record<KafkaEngine, string>> = {
  kafkajs: "kafkajs",
  librdkafka: "@confluentinc/kafka-javascript",
};

export interface BrokerInfo {
  /** The broker package. */
  readonly package: string;
  /** What the service runs on, for the prompt and the README. */
  readonly title: string;
  /** What `npm start` needs, for the README. */
  readonly runs: string;
}

export const brokers: Readonly<Record<BrokerName, BrokerInfo>> = {
  file: {
    package: "@ruststream/file",
    title: "a stream file (no server)",
    runs: "No server: the messages live in `data/orders.ss` (`ORDERS_FILE` moves it), byte-compatible with Rust's `sea-streamer-file`. Delete `data/` to start afresh.",
  },
  redis: {
    package: "@ruststream/redis",
    title: "Redis streams",
    runs: "A Redis 7 server at `REDIS_URL` (default `redis://127.0.0.1:6379`).",
  },
  kafka: {
    package: "@ruststream/kafka",
    title: "Apache Kafka",
    runs: "A Kafka cluster at `KAFKA_BROKERS` (default `127.0.0.1:9092`); the consumer group is `KAFKA_GROUP` (default `orders`).",
  },
  pulsar: {
    package: "@ruststream/pulsar",
    title: "Apache Pulsar",
    runs: "A Pulsar 4 broker at `PULSAR_URL` (default `pulsar://127.0.0.1:6650`).",
  },
  nats: {
    package: "@ruststream/nats",
    title: "NATS JetStream",
    runs: "A NATS server with JetStream enabled (`nats-server -js`) at `NATS_URL` (default `nats://127.0.0.1:4222`); the stream is `ORDERS_STREAM` (default `ORDERS`), declared if it is missing.",
  },
  rabbitmq: {
    package: "@ruststream/rabbitmq",
    title: "RabbitMQ",
    runs: "A RabbitMQ node (3.10 or later) at `RABBITMQ_URL` (default `amqp://guest:guest@127.0.0.1:5672`); the service declares its `orders` and `receipts` quorum queues when it starts.",
  },
  postgres: {
    package: "@ruststream/postgres",
    title: "a queue in PostgreSQL",
    runs: "A PostgreSQL 13 or newer database at `DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/postgres`); the queue table, `ruststream_queue`, is created at connect when missing.",
  },
};

export function isBrokerName(text: string): text is BrokerName {
  return (brokerNames as readonly string[]).includes(text);
}

/** An engine by its name, or by its client's maker ("confluent" is librdkafka's client). */
export function kafkaEngineOf(text: string): KafkaEngine | undefined {
  if (text === "confluent") return "librdkafka";
  return (kafkaEngines as readonly string[]).includes(text) ? (text as KafkaEngine) : undefined;
}
