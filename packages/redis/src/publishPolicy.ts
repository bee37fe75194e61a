import { type PublishPolicy, RustStreamError } from "@ruststream/core";
import { type PolicyOwner, pairedHost, policyMark } from "@ruststream/core/broker";
import type { RedisPublisher, RedisPublishSettings } from "./publisher.js";

/** Who this policy pairs with, named when it is given another broker's connection. */
const owner: PolicyOwner = { kind: "redis", label: "Redis", broker: "RedisBroker" };

/**
 * The Redis publish policy: plain configuration, paired with a connected broker into a
 * {@link RedisPublisher}. `new RedisPublish()` is the broker's default.
 */
export class RedisPublish implements PublishPolicy<object, RedisPublisher> {
  readonly [policyMark] = "redis";
  readonly settings: RedisPublishSettings;

  constructor(settings: RedisPublishSettings = {}) {
    if (
      settings.maxLen !== undefined &&
      !(Number.isSafeInteger(settings.maxLen) && settings.maxLen >= 1)
    ) {
      throw new RustStreamError("invalid-argument", `maxLen: ${settings.maxLen}; give 1 or more`);
    }
    this.settings = settings;
  }

  // Any connection, checked by its brand: naming the connection's class here would tie this file
  // to connection.ts and back.
  async pair(connected: object): Promise<RedisPublisher> {
    const host = pairedHost<PairsRedisPublishers>(connected, owner, "pairPublisher");
    return host.pairPublisher(this.settings);
  }
}

/** A Redis connection, as the policy recognises it. */
interface PairsRedisPublishers {
  pairPublisher(settings: RedisPublishSettings): RedisPublisher;
}
