import { headerNames } from "@ruststream/core";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RedisBroker, RedisList, RedisPublish } from "../src/index.js";
import type { RedisListSubscription } from "../src/list/listSubscription.js";
import { bytes, requireEnv, sleep, text, uniqueKey } from "./env.js";

const url = () => requireEnv("REDIS_URL");
const inspector = new Redis(url(), { protocol: 2 });
afterAll(() => inspector.disconnect());

async function next(subscription: RedisListSubscription) {
  const result = await subscription.next();
  if (result.done) throw new Error("the subscription ended");
  return result.value;
}

describe("reliable lists", () => {
  it("moves into the processing list, removes on ack, pushes back on requeue", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueKey("list");
    const sub = (await broker.subscribe(new RedisList(key))) as RedisListSubscription;
    const publisher = await new RedisPublish({ transport: "list" }).pair(broker);
    await publisher.publish({ name: key, payload: bytes("job"), partitionKey: "p" });
    const d = await next(sub);
    expect(text(d.payload)).toBe("job");
    expect(text(d.partitionKey!)).toBe("p");
    expect(await inspector.llen(`${key}.processing`)).toBe(1);
    expect(await d.nack({ requeue: true })).toBe("ok");
    const again = await next(sub);
    // Lists keep no delivery count: the copy carries it in its retry-count header.
    expect(again.headers.getString(headerNames.retryCount)).toBe("1");
    expect(again.redeliveryCount).toBe(1);
    expect(await again.nackAfter(10)).toBe("unsupported");
    expect(await again.ack()).toBe("ok");
    expect(await inspector.llen(`${key}.processing`)).toBe(0);
    expect(await inspector.llen(key)).toBe(0);
    await broker.shutdown();
  });

  it("recovers what a dead consumer left in processing", async () => {
    const key = uniqueKey("orphans");
    const source = new RedisList(key, { recoveryIdleMs: 100, blockMs: 50 });
    const dead = await new RedisBroker({ url: url() }).connect();
    const publisher = await new RedisPublish({ transport: "list" }).pair(dead);
    await publisher.publish({ name: key, payload: bytes("orphan") });
    const deadSub = (await dead.subscribe(source)) as RedisListSubscription;
    await next(deadSub);
    // Dies without settling or returning anything.
    await dead.link.close();
    expect(await inspector.llen(`${key}.processing`)).toBe(1);
    await sleep(150);
    const live = await new RedisBroker({ url: url() }).connect();
    const sub = (await live.subscribe(source)) as RedisListSubscription;
    const back = await next(sub);
    expect(text(back.payload)).toBe("orphan");
    // The dead consumer's delivery counts.
    expect(back.headers.getString(headerNames.retryCount)).toBe("1");
    await back.ack();
    expect(await inspector.llen(`${key}.processing`)).toBe(0);
    expect(await inspector.zcard(`${key}.recovery`)).toBe(0);
    await live.shutdown();
  });
});
