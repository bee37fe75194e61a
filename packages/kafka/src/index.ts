// The Kafka broker's public API, by name. The layout every broker package follows (README, Layout):
//   broker.ts      the broker, its connection and its closed witness
//   sources.ts     the descriptor subscribe takes (KafkaTopic)
//   publisher.ts   the publish policy and the live publisher
//   position.ts    where a delivery sits, and where a seek goes
//   names.ts       the names it writes on its wire
//   roundRobin.ts  the round-robin partition middleware
//   replyInbox.ts  where a connection's requests read their replies (its own topic, or replyTopic)
//   topic/         the one subscription mode: a consumer group member on a topic, its delivery,
//                  the watermark behind tracked commits, start offsets
//   client/        the port and the engines behind it (librdkafka, kafkajs): the only code that
//                  meets the cluster
//   inProcess/     the in-process stand-in of a cluster, for TestApp
export type { ClosedKafkaBroker, ConnectedKafkaBroker, KafkaBrokerOptions } from "./broker.js";
export { KafkaBroker } from "./broker.js";
export type {
  KafkaConnectionOptions,
  KafkaEngineName,
  KafkaSaslOptions,
} from "./client/connectionOptions.js";
export type { Compression, ConfigValue, Partitioner } from "./client/link.js";
export { murmur2, partitionOfKey, toPositive } from "./client/partitioners.js";
export { kafkaHeaders } from "./names.js";
export type { KafkaPositionTarget } from "./position.js";
export { KafkaPosition } from "./position.js";
export type { KafkaPublishOptions, KafkaPublishSettings } from "./publisher.js";
export { KafkaPublish, KafkaPublisher } from "./publisher.js";
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
