// A Redis stream or reliable list on the persistent Redis of tooling/brokers (AOF, fsync always: what it confirmed
// survives a hard restart). The load is published straight to Redis; the services connect through
// the fault proxy when the run has one.

import { RedisBroker, RedisPublish } from "@ruststream/redis";
import { brokers, ensureBrokers, requireEnv } from "@ruststream/tooling-testkit";
import { Redis } from "ioredis";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { publishLoad } from "../load.js";
import type { Target } from "./target.js";

export async function redisTarget(
  key: string,
  transport: "stream" | "list",
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  log: (line: string) => void,
): Promise<Target> {
  await ensureBrokers(["redis"], log);
  const direct = requireEnv("REDIS_PERSISTENT_URL");
  const { hostname, port } = new URL(direct);
  const serviceAddress =
    proxy === undefined
      ? direct
      : `redis://127.0.0.1:${await proxy.toxiproxy.proxy(proxy.name, `${hostname}:${port}`)}`;
  return {
    serviceAddress,
    publishBeforeStart: false,
    async publishAll(messages, windowMs, paceLog) {
      const broker = await new RedisBroker({ url: direct }).connect();
      const publisher = await new RedisPublish({ transport }).pair(broker);
      await publishLoad(broker, publisher, key, messages, windowMs, paceLog);
    },
    restartBroker: () => brokers.redis.restart("persistent", { hard: true }),
    async cleanup() {
      const redis = new Redis(direct, { lazyConnect: true, maxRetriesPerRequest: 3 });
      await redis.connect();
      // The stream, its dead letter (`<key>.dlq`) and the delayed-retry keys all start with the key.
      const keys = await redis.keys(`${key}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    },
  };
}
