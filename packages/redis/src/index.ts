export type {
  ClosedRedisBroker,
  RedisBrokerOptions,
  RedisDelivery,
  RedisSubscription,
} from "./broker.js";
export { ConnectedRedisBroker, RedisBroker } from "./broker.js";
export type { RedisConnectionOptions, RedisTlsOptions } from "./client/connectionOptions.js";
export type { RedisListDelivery } from "./list/listDelivery.js";
export type { RedisListSubscription } from "./list/listSubscription.js";
export { keySuffixes, redisHeaders, streamFields } from "./names.js";
export { RedisSequencePosition, RedisStreamPosition } from "./position.js";
export type { RedisPublishSettings, RedisTransport } from "./publisher.js";
export { RedisPublish, RedisPublisher } from "./publisher.js";
export type { RedisPubSubDelivery } from "./pubsub/pubsubDelivery.js";
export type { RedisPubSubSubscription } from "./pubsub/pubsubSubscription.js";
export type {
  DelayedRetryOptions,
  RedisListOptions,
  RedisSource,
  RedisStreamOptions,
  StreamStart,
} from "./sources.js";
export { RedisList, RedisPubSub, RedisPubSubPattern, RedisStream } from "./sources.js";
export type { RedisStreamDelivery } from "./stream/streamDelivery.js";
export type { RedisStreamSubscription } from "./stream/streamSubscription.js";
