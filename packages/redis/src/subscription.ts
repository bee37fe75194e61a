import type { RedisListSubscription } from "./list/listSubscription.js";
import type { RedisPubSubSubscription } from "./pubsub/pubsubSubscription.js";
import type { RedisStreamSubscription } from "./stream/streamSubscription.js";

/** Every subscription the Redis broker opens; only stream subscriptions batch and seek. */
export type RedisSubscription =
  | RedisStreamSubscription
  | RedisListSubscription
  | RedisPubSubSubscription;
