// The Redis broker's public API, by name. The layout every broker package follows (README, Layout):
//   broker.ts         the broker: configuration only, describeServer, connect, connectInProcess
//   connection.ts     its connection and its closed witness
//   options.ts        the options the broker takes and its connection reads
//   sources.ts        the descriptors subscribe takes
//   publishPolicy.ts  the publish policy
//   publisher.ts      the live publisher
//   replyInbox.ts     where requests wait for their replies
//   position.ts       where a delivery sits
//   names.ts          the names it writes on its wire
//   host.ts           what the subscription modes need from the connection
//   stream/, list/, pubsub/  one folder per subscription mode: its subscription and delivery
//   client/           the adapter over ioredis: the only code that meets the server
//   inProcess/        the in-process stand-in of the server, for TestApp
export { RedisBroker } from "./broker.js";
export type {
  RedisClusterOptions,
  RedisConnectionOptions,
  RedisSentinelOptions,
} from "./client/connectionOptions.js";
export type {
  ClosedRedisBroker,
  ConnectedRedisBroker,
  RedisDelivery,
  RedisSubscription,
} from "./connection.js";
export type { RedisListDelivery } from "./list/listDelivery.js";
export type { RedisListSubscription } from "./list/listSubscription.js";
export { keySuffixes, redisHeaders, streamFields } from "./names.js";
export type { RedisBrokerOptions } from "./options.js";
export { RedisSequencePosition, RedisStreamPosition } from "./position.js";
export type { RedisPublishSettings, RedisTransport } from "./publisher.js";
export { RedisPublisher } from "./publisher.js";
export { RedisPublish } from "./publishPolicy.js";
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
