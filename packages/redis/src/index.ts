// The Redis broker's public API, by name. The layout every broker package follows (README, Layout):
//   broker.ts     the broker, its connection and its closed witness
//   sources.ts    the descriptors subscribe takes
//   publisher.ts  the publish policy and the live publisher
//   position.ts   where a delivery sits
//   names.ts      the names it writes on its wire
//   host.ts       what the subscription modes need from the connection
//   stream/, list/, pubsub/  one folder per subscription mode: its subscription and delivery
//   client/       the adapter over ioredis: the only code that meets the server
//   inProcess/    the in-process stand-in of the server, for TestApp
export type {
  ClosedRedisBroker,
  ConnectedRedisBroker,
  RedisBrokerOptions,
  RedisDelivery,
  RedisSubscription,
} from "./broker.js";
export { RedisBroker } from "./broker.js";
export type {
  RedisClusterOptions,
  RedisConnectionOptions,
  RedisSentinelOptions,
} from "./client/connectionOptions.js";
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
