import { HeaderMap, headerNames, isRustStreamError } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RedisBroker, RedisStream } from "../src/index.js";
import type { RedisStreamSubscription } from "../src/stream/streamSubscription.js";

const url = () => requireEnv("REDIS_URL");
const raw = () => new Redis(url(), { lazyConnect: false, protocol: 2 });
const clients: Redis[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});
function inspector(): Redis {
  const c = raw();
  clients.push(c);
  return c;
}

async function pending(r: Redis, key: string): Promise<number> {
  const summary = (await r.xpending(key, "g")) as unknown[];
  return Number(summary[0]);
}

async function next(subscription: RedisStreamSubscription) {
  const result = await subscription.next();
  if (result.done) throw new Error("the subscription ended");
  return result.value;
}

describe("streams with consumer groups", () => {
  it("round-trips payload and headers byte for byte, and acks with XACK", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("roundtrip");
    const sub = (await broker.subscribe(
      new RedisStream(key, { group: "g" }),
    )) as RedisStreamSubscription;
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    const headers = new HeaderMap({ "x-bin": new Uint8Array([0, 13, 10, 0xff]), "x-empty": "" });
    const receipt = await publisher.publish({
      name: key,
      payload: new Uint8Array([1, 2, 0, 255]),
      headers,
      partitionKey: "k1",
    });
    expect(receipt.position).toMatch(/^\d+-\d+$/);
    const d = await next(sub);
    expect([...d.payload]).toEqual([1, 2, 0, 255]);
    expect([...d.headers.get("x-bin")!]).toEqual([0, 13, 10, 0xff]);
    expect(d.headers.getString("x-empty")).toBe("");
    expect(text(d.partitionKey!)).toBe("k1");
    expect(d.headers.getString("redis-partition-key")).toBe("k1");
    expect(d.redeliveryCount).toBe(1);
    expect(d.position.toString()).toBe(receipt.position);
    const r = inspector();
    const fields = (await r.xrange(key, "-", "+"))[0]![1];
    expect(fields).toContain("_payload");
    expect(fields).toContain("h:x-bin");
    expect(await pending(r, key)).toBe(1);
    expect(await d.ack()).toBe("ok");
    expect(await pending(r, key)).toBe(0);
    await broker.shutdown();
  });

  it("a requeue appends a copy with the retry-count header raised and acks the original", async () => {
    const broker = await new RedisBroker({ url: url(), group: "g" }).connect();
    const key = uniqueName("requeue");
    const sub = (await broker.subscribe(key)) as RedisStreamSubscription;
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await publisher.publish({ name: key, payload: bytes("again") });
    const first = await next(sub);
    expect(await first.nack({ requeue: true })).toBe("ok");
    const second = await next(sub);
    // The count travels in the header, as RustStream writes it; the copy is a fresh entry.
    expect(second.headers.getString(headerNames.retryCount)).toBe("1");
    expect(second.redeliveryCount).toBe(1);
    expect(second.attempt).toBe(2);
    expect(second.id).not.toBe(first.id);
    const r = inspector();
    expect(await r.xlen(key)).toBe(2);
    expect(await pending(r, key)).toBe(1);
    await second.ack();
    await broker.shutdown();
  });

  it("reclaims what a dead consumer left pending, counting its deliveries", async () => {
    const key = uniqueName("reclaim");
    const dead = await new RedisBroker({ url: url() }).connect();
    const publisher = await dead.defaultPublishPolicy().pair(dead);
    const source = new RedisStream(key, { group: "g", reclaimIdleMs: 50, blockMs: 100 });
    const deadSub = (await dead.subscribe(source)) as RedisStreamSubscription;
    await publisher.publish({ name: key, payload: bytes("orphan") });
    const held = await next(deadSub);
    expect(held.redeliveryCount).toBe(1);
    // The consumer dies: its connection goes without returning anything.
    await dead.link.close();
    const live = await new RedisBroker({ url: url() }).connect();
    // Not yet idle for 50 ms when the new consumer first looks: its later reclaims take it.
    const sub = (await live.subscribe(source)) as RedisStreamSubscription;
    const back = await next(sub);
    expect(text(back.payload)).toBe("orphan");
    expect(back.deliveryCount).toBe(2);
    expect(back.redeliveryCount).toBe(2);
    expect(back.headers.has(headerNames.retryCount)).toBe(false);
    // Requeued after two deliveries: the copy carries both, so its first delivery is attempt 3.
    expect(await back.nack({ requeue: true })).toBe("ok");
    const copy = await next(sub);
    expect(copy.headers.getString(headerNames.retryCount)).toBe("2");
    expect(copy.redeliveryCount).toBe(1);
    expect(copy.attempt).toBe(3);
    await copy.ack();
    expect(await pending(inspector(), key)).toBe(0);
    await live.shutdown();
  });

  it("nackAfter parks a durable copy in the sorted set and brings it back when due", async () => {
    const broker = await new RedisBroker({ url: url(), group: "g" }).connect();
    const key = uniqueName("delay");
    const sub = (await broker.subscribe(key)) as RedisStreamSubscription;
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await publisher.publish({ name: key, payload: bytes("later") });
    const first = await next(sub);
    const at = Date.now();
    expect(await first.nackAfter(300)).toBe("ok");
    expect(await inspector().zcard(`${key}.delayed`)).toBe(1);
    const again = await next(sub);
    expect(Date.now() - at).toBeGreaterThanOrEqual(295);
    expect(text(again.payload)).toBe("later");
    expect(again.headers.getString(headerNames.retryCount)).toBe("1");
    expect(again.redeliveryCount).toBe(1);
    await again.ack();
    expect(await inspector().zcard(`${key}.delayed`)).toBe(0);
    await broker.shutdown();
  });

  it("a broker-side cap dead-letters after exactly maxAttempts, with reason and counts", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("cap");
    const dlq = `${key}.dlq`;
    const sub = (await broker.subscribe(
      new RedisStream(key, { group: "g", retry: { maxAttempts: 3, deadLetter: dlq } }),
    )) as RedisStreamSubscription;
    const dead = (await broker.subscribe(
      new RedisStream(dlq, { group: "g" }),
    )) as RedisStreamSubscription;
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await publisher.publish({ name: key, payload: bytes("poison") });
    for (let attempt = 1; attempt <= 3; attempt++) {
      const d = await next(sub);
      expect(d.redeliveryCount).toBe(1);
      expect(d.attempt).toBe(attempt);
      expect(await d.nack({ requeue: true })).toBe("ok");
    }
    const moved = await next(dead);
    expect(text(moved.payload)).toBe("poison");
    expect(moved.headers.getString("x-dead-letter-reason")).toBe("max-attempts");
    expect(moved.headers.getString("x-ruststream-dlq-source")).toBe(key);
    // Its three deliveries in the retry count; one of them this entry's own.
    expect(moved.headers.getString(headerNames.retryCount)).toBe("3");
    expect(moved.headers.getString("redis-delivery-count")).toBe("1");
    await moved.ack();
    await broker.shutdown();
  });

  it("refuses a payload over maxMessageBytes before sending it", async () => {
    const broker = await new RedisBroker({ url: url(), maxMessageBytes: 8 }).connect();
    const key = uniqueName("big");
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await expect(publisher.publish({ name: key, payload: new Uint8Array(9) })).rejects.toSatisfy(
      (e: unknown) => isRustStreamError(e, "publish-refused"),
    );
    expect(await inspector().exists(key)).toBe(0);
    await broker.shutdown();
  });

  it("trims with MAXLEN when asked", async () => {
    const broker = await new RedisBroker({ url: url(), maxLen: 10 }).connect();
    const key = uniqueName("trim");
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    for (let i = 0; i < 500; i++) await publisher.publish({ name: key, payload: bytes(`m${i}`) });
    expect(await inspector().xlen(key)).toBeLessThan(500);
    await broker.shutdown();
  });

  it("refuses a stream without a group, naming the settings that give one", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    expect(() => broker.source("orders")).toThrow(/through an app .*group option/);
    await expect(broker.subscribe(new RedisStream("orders"))).rejects.toThrow(
      /"orders" has no consumer group, and none is set: .*give RedisBroker a group option/,
    );
    await broker.shutdown();
  });

  it("takes the group from the connecting app's name, unless the option or descriptor names one", async () => {
    const app = { name: "billing", version: "2.0.0" };
    const derived = await new RedisBroker({ url: url() }).connect({ app });
    expect(derived.source("invoices").group).toBe("billing");
    const given = await new RedisBroker({ url: url(), group: "ledger" }).connect({ app });
    expect(given.source("invoices").group).toBe("ledger");
    const key = uniqueName("app-group");
    const sub = await derived.subscribe(new RedisStream(key));
    const own = await derived.subscribe(new RedisStream(key, { group: "audit" }));
    const groups = (await inspector().xinfo("GROUPS", key)) as unknown[][];
    expect(groups.map((g) => g[1]).sort()).toEqual(["audit", "billing"]);
    await sub.close();
    await own.close();
    await derived.shutdown();
    await given.shutdown();
  });

  it("a delayed retry survives a restart of the app", async () => {
    const key = uniqueName("durable-delay");
    const source = new RedisStream(key, { group: "g", blockMs: 200 });
    const before = await new RedisBroker({ url: url() }).connect();
    const sub = (await before.subscribe(source)) as RedisStreamSubscription;
    const publisher = await before.defaultPublishPolicy().pair(before);
    await publisher.publish({ name: key, payload: bytes("parked") });
    const first = await next(sub);
    expect(await first.nackAfter(400)).toBe("ok");
    const closed = await before.shutdown();
    expect(closed.returnedDeliveries).toBe(0);
    const after = await new RedisBroker({ url: url() }).connect();
    const resumed = (await after.subscribe(source)) as RedisStreamSubscription;
    const back = await next(resumed);
    expect(text(back.payload)).toBe("parked");
    expect(back.headers.getString(headerNames.retryCount)).toBe("1");
    expect(back.redeliveryCount).toBe(1);
    await back.ack();
    await after.shutdown();
  });

  it("an entry another tool wrote, or a malformed one, arrives without crashing the reader", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("malformed");
    const sub = (await broker.subscribe(
      new RedisStream(key, { group: "g" }),
    )) as RedisStreamSubscription;
    const r = inspector();
    await r.xadd(key, "*", "foo", "bar");
    await r.xadd(key, "*", "_payload", "ok", "h:", "empty-name", "_requeues", "not-a-number");
    const odd = await next(sub);
    // No payload field: handed over marked unreadable, for the runtime's decode policy.
    expect(odd.payload.length).toBe(0);
    expect(String(odd.decodeError)).toMatch(/has no "_payload" field/);
    expect(odd.headers.size).toBe(0);
    expect(odd.redeliveryCount).toBe(1);
    await odd.ack();
    const other = await next(sub);
    expect(other.decodeError).toBeUndefined();
    expect(text(other.payload)).toBe("ok");
    expect(other.redeliveryCount).toBe(1);
    await other.ack();
    await broker.shutdown();
  });
});

describe("a connection cut under a stream subscription", () => {
  it("delivers what the group holds pending for this consumer but never reached it (a reply the cut swallowed)", async () => {
    const broker = await new RedisBroker({ url: url() }).connect();
    const key = uniqueName("swallowed");
    const sub = (await broker.subscribe(
      new RedisStream(key, { group: "g", blockMs: 100 }),
    )) as RedisStreamSubscription;
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await publisher.publish({ name: key, payload: bytes("swallowed") });
    // The server hands the entry to this consumer, and the reply never reaches it: as when a read's
    // reply is lost to a cut or a crash after the server kept the entry pending here.
    const r = inspector();
    await r.xreadgroup("GROUP", "g", sub.consumer, "COUNT", 10, "STREAMS", key, ">");
    expect(await pending(r, key)).toBe(1);
    const first = sub.next();
    // The subscription's blocked read, cut.
    const killed = await killBlockedReaders(r, sub.consumer);
    expect(killed).toBeGreaterThan(0);
    const got = await Promise.race([
      first,
      new Promise<"never">((resolve) => setTimeout(() => resolve("never"), 5000)),
    ]);
    expect(got, "the swallowed entry after the cut").not.toBe("never");
    const d = (got as IteratorResult<Awaited<ReturnType<typeof next>>>).value!;
    expect(text(d.payload)).toBe("swallowed");
    // The server's count: handed to this consumer twice.
    expect(d.redeliveryCount).toBe(2);
    expect(await d.ack()).toBe("ok");
    expect(await pending(r, key)).toBe(0);
    await sub.close();
    await broker.shutdown();
  });
});

/** Kills the connections blocked in an XREADGROUP as `consumer`; answers how many. */
async function killBlockedReaders(r: Redis, consumer: string): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const list = (await r.client("LIST")) as string;
    const ids = list
      .split("\n")
      .filter((line) => line.includes("cmd=xreadgroup") && line.includes(" flags=b"))
      .map((line) => /\bid=(\d+)/.exec(line)?.[1])
      .filter((id): id is string => id !== undefined);
    if (ids.length > 0) {
      for (const id of ids) await r.client("KILL", "ID", id);
      return ids.length;
    }
    if (Date.now() > deadline) throw new Error(`no read blocked as ${consumer}:\n${list}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
