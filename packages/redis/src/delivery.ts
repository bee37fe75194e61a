import type { RedisListDelivery } from "./list/listDelivery.js";
import type { RedisPubSubDelivery } from "./pubsub/pubsubDelivery.js";
import type { RedisStreamDelivery } from "./stream/streamDelivery.js";

/** Every delivery the Redis broker hands out. */
export type RedisDelivery = RedisStreamDelivery | RedisListDelivery | RedisPubSubDelivery;
