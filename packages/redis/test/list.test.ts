import { headerNames } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisBroker, RedisList, RedisPublish } from "../src/index.js";
import type { RedisListSubscription } from "../src/list/listSubscription.js";
import { type ServerWatch, watchServer } from "./serverWatch.js";

const url = () => requireEnv("REDIS_URL");
const inspector = new Redis(url(), { protocol: 2 });
let server: ServerWatch;
beforeAll(async () => {
  server = await watchServer(url());
});
afterAll(() => {
  server.close();
  inspector.disconnect();
});

async function next(subscription: RedisListSubscription) {
  const result = await subscription.next();
  if (result.done) throw new Error("the subscription ended");
  return result.value;
}

describe("reliable lists", () => {
  it("moves into the processing list, removes on ack, pushes back on requeue", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("list");
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
    const key = uniqueName("orphans");
    const source = new RedisList(key, { recoveryIdleMs: 100, blockMs: 50 });
    const dead = await new RedisBroker({ url: url() }).connect();
    const publisher = await new RedisPublish({ transport: "list" }).pair(dead);
    await publisher.publish({ name: key, payload: bytes("orphan") });
    const deadSub = (await dead.subscribe(source)) as RedisListSubscription;
    await next(deadSub);
    // Dies without settling or returning anything.
    await dead.link.close();
    expect(await inspector.llen(`${key}.processing`)).toBe(1);
    // Not yet idle for 100 ms when the new consumer first looks: its later sweeps return it.
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

  it("moves up to count values in one batch, in queue order, and waits for one when empty", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("batch");
    const sub = (await broker.subscribe(
      new RedisList(key, { count: 3, blockMs: 2000 }),
    )) as RedisListSubscription;
    const publisher = await new RedisPublish({ transport: "list" }).pair(broker);
    for (const job of ["a", "b", "c", "d"])
      await publisher.publish({ name: key, payload: bytes(job) });
    const first = await sub.nextBatch(10);
    expect(first.map((d) => text(d.payload))).toEqual(["a", "b", "c"]);
    expect(await inspector.llen(`${key}.processing`)).toBe(3);
    const second = await sub.nextBatch(10);
    expect(second.map((d) => text(d.payload))).toEqual(["d"]);
    // Empty queue: the pull blocks until a value arrives, then hands over that one.
    const waiting = sub.nextBatch(10);
    // Published only once the pull blocks on the server, so the wait is what hands it over.
    await server.ran("BLMOVE", key);
    await publisher.publish({ name: key, payload: bytes("e") });
    expect((await waiting).map((d) => text(d.payload))).toEqual(["e"]);
    for (const d of [...first, ...second]) expect(await d.ack()).toBe("ok");
    expect(await inspector.llen(`${key}.processing`)).toBe(1);
    await broker.shutdown();
    // Shutdown returned the one still held, counted, to the queue.
    expect(await inspector.llen(`${key}.processing`)).toBe(0);
    expect(await inspector.llen(key)).toBe(1);
  });

  it("claims every value of a batch for recovery, and a dead consumer's batch comes back whole", async () => {
    const key = uniqueName("batch-orphans");
    const source = new RedisList(key, { recoveryIdleMs: 100, blockMs: 50, count: 8 });
    const dead = await new RedisBroker({ url: url() }).connect();
    const publisher = await new RedisPublish({ transport: "list" }).pair(dead);
    for (let i = 0; i < 5; i++) await publisher.publish({ name: key, payload: bytes(`job-${i}`) });
    const deadSub = (await dead.subscribe(source)) as RedisListSubscription;
    expect((await deadSub.nextBatch(8)).length).toBe(5);
    expect(await inspector.zcard(`${key}.recovery`)).toBe(5);
    await dead.link.close();
    const live = await new RedisBroker({ url: url() }).connect();
    const sub = (await live.subscribe(source)) as RedisListSubscription;
    const back: string[] = [];
    while (back.length < 5) {
      for (const d of await sub.nextBatch(8)) {
        back.push(text(d.payload));
        expect(d.headers.getString(headerNames.retryCount)).toBe("1");
        await d.ack();
      }
    }
    expect(back.sort()).toEqual(["job-0", "job-1", "job-2", "job-3", "job-4"]);
    expect(await inspector.llen(`${key}.processing`)).toBe(0);
    expect(await inspector.zcard(`${key}.recovery`)).toBe(0);
    await live.shutdown();
  });

  it("refuses a count that is not a whole number of 1 or more", () => {
    expect(() => new RedisList("jobs", { count: 0 })).toThrow(/count: 0; give a whole number/);
  });
});
