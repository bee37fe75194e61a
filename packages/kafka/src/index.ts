// The Kafka broker's public API, by name. The layout every broker package follows (README, Layout):
//   broker.ts         the broker: configuration only, describeServer, connect, connectInProcess
//   connection.ts     its connection and its closed witness
//   options.ts        the options the broker takes, and the settings its connection reads
//   sources.ts        the descriptor subscribe takes (KafkaTopic)
//   publishPolicy.ts  the publish policy
//   publisher.ts      the live publisher
//   replyInbox.ts     where a connection's requests read their replies (its own topic, or replyTopic)
//   position.ts       where a delivery sits, and where a seek goes
//   names.ts          the names it writes on its wire
//   roundRobin.ts     the round-robin partition middleware
//   topic/            the one subscription mode: a consumer group member on a topic, its delivery,
//                     the watermark behind tracked commits, start offsets
//   client/           the port and the engines behind it (librdkafka, kafkajs): the only code that
//                     meets the cluster
//   inProcess/        the in-process stand-in of a cluster, for TestApp
export { KafkaBroker } from "./broker.js";
export type {
  KafkaConnectionOptions,
  KafkaEngineName,
  KafkaSaslOptions,
} from "./client/connectionOptions.js";
export type { Compression, ConfigValue, Partitioner } from "./client/link.js";
export { murmur2, partitionOfKey, toPositive } from "./client/partitioners.js";
export type { ClosedKafkaBroker, ConnectedKafkaBroker } from "./connection.js";
export { kafkaHeaders } from "./names.js";
export type { KafkaBrokerOptions } from "./options.js";
export type { KafkaPositionTarget } from "./position.js";
export { KafkaPosition } from "./position.js";
export type { KafkaPublishOptions } from "./publisher.js";
export { KafkaPublisher } from "./publisher.js";
export type { KafkaPublishSettings } from "./publishPolicy.js";
export { KafkaPublish } from "./publishPolicy.js";
export type { RoundRobinOptions } from "./roundRobin.js";
export { roundRobinPartitions } from "./roundRobin.js";
export type {
  Assignment,
  KafkaTopicOptions,
  StartOffset,
  TopicCreation,
} from "./sources.js";
export { KafkaTopic } from "./sources.js";
export type { KafkaDelivery } from "./topic/topicDelivery.js";
export type { KafkaTopicSubscription } from "./topic/topicSubscription.js";
