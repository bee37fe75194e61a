import { isRustStreamError } from "@ruststream/core";
import { afterEach, describe, expect, it } from "vitest";
import type { Link } from "../src/link.js";
import { collect, message, queue, sides, text, unique } from "./linkHarness.js";

// The link is everything the broker asks of RabbitMQ; the same scenarios on the real node and on
// the in-process stand-in, so the stand-in answers as the server does.

const open: Link[] = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((l) => l.close()));
});

describe.each(sides)("the link ($side)", ({ open: make }) => {
  const link = async () => {
    const l = await make();
    open.push(l);
    return l;
  };

  it("checks a topology without creating it: a missing queue is named, a different type too", async () => {
    const l = await link();
    const name = unique("check");
    const missing = await l
      .ensure({ exchanges: [], queues: [queue(name)], bindings: [] }, false)
      .catch((e) => e);
    expect(isRustStreamError(missing, "invalid-argument")).toBe(true);
    expect(missing.message).toContain(`queue "${name}" does not exist`);
    await l.ensure(
      { exchanges: [], queues: [queue(name, { "x-queue-type": "classic" })], bindings: [] },
      true,
    );
    // The same declaration checks; a quorum one is told the difference.
    await l.ensure(
      { exchanges: [], queues: [queue(name, { "x-queue-type": "classic" })], bindings: [] },
      false,
    );
    const different = await l
      .ensure(
        { exchanges: [], queues: [queue(name, { "x-queue-type": "quorum" })], bindings: [] },
        false,
      )
      .catch((e) => e);
    expect(isRustStreamError(different, "invalid-argument")).toBe(true);
    expect(different.message).toContain("x-queue-type");
    // The link still works after the refusals (they closed only throwaway channels).
    await l.publish(message("", name, "still here"));
    const got = await collect(l, name);
    expect((await got.count(1)).map(text)).toEqual(["still here"]);
    got.seen[0]?.ack();
  });

  it("an unroutable mandatory publish is refused naming the exchange and the routing key", async () => {
    const l = await link();
    const exchange = unique("nowhere");
    await l.ensure(
      {
        exchanges: [
          {
            name: exchange,
            type: "direct",
            durable: false,
            autoDelete: true,
            internal: false,
            arguments: {},
          },
        ],
        queues: [],
        bindings: [],
      },
      true,
    );
    const refused = await l.publish(message(exchange, "no.such.key", "lost?")).catch((e) => e);
    expect(isRustStreamError(refused, "publish-refused")).toBe(true);
    expect(refused.message).toContain(`exchange "${exchange}"`);
    expect(refused.message).toContain('routing key "no.such.key"');
    // Not mandatory: the server lets it go, and says so by confirming.
    await l.publish(message(exchange, "no.such.key", "let go", {}, false));
  });

  it("routes by topic pattern, by headers, fanout, and through an exchange-to-exchange binding", async () => {
    const l = await link();
    const [topic, headers, fanout, upstream] = ["topic", "headers", "fanout", "upstream"].map(
      unique,
    );
    const [qTopic, qHeaders, qFanout] = ["qt", "qh", "qf"].map(unique);
    const ex = (name: string, type: "topic" | "headers" | "fanout") => ({
      name,
      type,
      durable: false,
      autoDelete: false,
      internal: false,
      arguments: {},
    });
    await l.ensure(
      {
        exchanges: [
          ex(topic as string, "topic"),
          ex(headers as string, "headers"),
          ex(fanout as string, "fanout"),
          ex(upstream as string, "fanout"),
        ],
        queues: [queue(qTopic as string), queue(qHeaders as string), queue(qFanout as string)],
        bindings: [
          {
            source: topic as string,
            destination: qTopic as string,
            destinationKind: "queue",
            routingKey: "orders.*.created",
            arguments: {},
          },
          {
            source: headers as string,
            destination: qHeaders as string,
            destinationKind: "queue",
            routingKey: "",
            arguments: { "x-match": "all", region: "eu", tier: "gold" },
          },
          {
            source: fanout as string,
            destination: qFanout as string,
            destinationKind: "queue",
            routingKey: "",
            arguments: {},
          },
          {
            source: upstream as string,
            destination: topic as string,
            destinationKind: "exchange",
            routingKey: "",
            arguments: {},
          },
        ],
      },
      true,
    );
    await l.publish(message(topic as string, "orders.eu.created", "t1"));
    expect(
      await l.publish(message(topic as string, "orders.created", "t-miss")).catch((e) => e.code),
    ).toBe("publish-refused");
    await l.publish(message(headers as string, "", "h1", { region: "eu", tier: "gold" }));
    expect(
      await l
        .publish(message(headers as string, "", "h-miss", { region: "eu" }))
        .catch((e) => e.code),
    ).toBe("publish-refused");
    await l.publish(message(fanout as string, "anything", "f1"));
    await l.publish(message(upstream as string, "orders.us.created", "via-upstream"));
    const t = await collect(l, qTopic as string);
    const h = await collect(l, qHeaders as string);
    const f = await collect(l, qFanout as string);
    expect((await t.count(2)).map(text)).toEqual(["t1", "via-upstream"]);
    expect((await h.count(1)).map(text)).toEqual(["h1"]);
    expect((await f.count(1)).map(text)).toEqual(["f1"]);
    for (const d of [...t.seen, ...h.seen, ...f.seen]) d.ack();
  });

  it("a consistent-hash exchange sends each routing key to one queue, always the same", async () => {
    const l = await link();
    const exchange = unique("hash");
    const queues = [unique("h1"), unique("h2")];
    await l.ensure(
      {
        exchanges: [
          {
            name: exchange,
            type: "x-consistent-hash",
            durable: false,
            autoDelete: false,
            internal: false,
            arguments: {},
          },
        ],
        queues: queues.map((q) => queue(q)),
        bindings: queues.map((q) => ({
          source: exchange,
          destination: q,
          destinationKind: "queue" as const,
          routingKey: "10",
          arguments: {},
        })),
      },
      true,
    );
    const keys = Array.from({ length: 20 }, (_, i) => `key-${i}`);
    for (const key of [...keys, ...keys]) await l.publish(message(exchange, key, key));
    const a = await collect(l, queues[0] as string, 100);
    const b = await collect(l, queues[1] as string, 100);
    // Split between two consumers: waited for together, each count unknown beforehand.
    const deadline = Date.now() + 5000;
    while (a.seen.length + b.seen.length < 40 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const inA = new Set(a.seen.map(text));
    const inB = new Set(b.seen.map(text));
    expect(a.seen.length + b.seen.length).toBe(40);
    // Every key landed in one queue only (both of its copies there).
    for (const key of keys) expect(inA.has(key) !== inB.has(key)).toBe(true);
    for (const d of [...a.seen, ...b.seen]) d.ack();
  });

  it("holds a consumer to its prefetch until it acks", async () => {
    const l = await link();
    const name = unique("prefetch");
    await l.ensure({ exchanges: [], queues: [queue(name)], bindings: [] }, true);
    for (const n of [1, 2, 3, 4, 5]) await l.publish(message("", name, String(n)));
    const got = await collect(l, name, 2);
    await got.count(2);
    // A third would have come with the first two; it comes once one is acked.
    const third = got.count(3, 5000);
    expect(got.seen.length).toBe(2);
    got.seen[0]?.ack();
    expect((await third).map(text)).toEqual(["1", "2", "3"]);
    for (const d of got.seen.slice(1)) d.ack();
    const rest = await got.count(5);
    for (const d of rest.slice(3)) d.ack();
  });

  it("a quorum queue counts returns and dead-letters past its delivery limit", async () => {
    const l = await link();
    const name = unique("quorum");
    const dead = unique("dead");
    await l.ensure(
      {
        exchanges: [],
        queues: [
          queue(dead),
          queue(name, {
            "x-queue-type": "quorum",
            "x-delivery-limit": 1,
            "x-dead-letter-exchange": "",
            "x-dead-letter-routing-key": dead,
          }),
        ],
        bindings: [],
      },
      true,
    );
    await l.publish(message("", name, "poison", { "x-keep": "me" }));
    const counts: unknown[] = [];
    const got = await collect(l, name, 1, (d) => {
      counts.push(d.properties.headers["x-delivery-count"]);
      d.reject(true);
    });
    const dl = await collect(l, dead);
    const [moved] = await dl.count(1);
    // Delivered twice (the limit allows one return); the second return moved it.
    expect(got.seen.length).toBe(2);
    expect(counts).toEqual([undefined, 1]);
    expect(text(moved as never)).toBe("poison");
    expect(moved?.properties.headers["x-keep"]).toBe("me");
    expect(moved?.properties.headers["x-first-death-reason"]).toBe("delivery_limit");
    moved?.ack();
  });

  it("a wait queue's message TTL dead-letters back to the work queue, no sooner than the TTL", async () => {
    const l = await link();
    const work = unique("work");
    const wait = `${work}.wait.300`;
    await l.ensure(
      {
        exchanges: [],
        queues: [
          queue(work),
          queue(wait, {
            "x-message-ttl": 300,
            "x-dead-letter-exchange": "",
            "x-dead-letter-routing-key": work,
          }),
        ],
        bindings: [],
      },
      true,
    );
    const got = await collect(l, work);
    const sent = Date.now();
    await l.publish(message("", wait, "later", { "x-ruststream-retry-count": "1" }));
    const [back] = await got.count(1);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(290);
    expect(text(back as never)).toBe("later");
    expect(back?.properties.headers["x-first-death-reason"]).toBe("expired");
    back?.ack();
  });

  it("request and reply over direct reply-to: each reply reaches its request's link", async () => {
    const requester = await link();
    const responder = await link();
    const name = unique("rpc");
    await requester.ensure({ exchanges: [], queues: [queue(name, {}, false)], bindings: [] }, true);
    const replies: string[] = [];
    requester.onReply((r) => replies.push(`${r.properties.correlationId}:${text(r)}`));
    await collect(responder, name, 10, (d) => {
      void responder.publish({
        exchange: "",
        routingKey: d.properties.replyTo as string,
        content: Buffer.from(text(d).toUpperCase()),
        properties: { headers: {}, correlationId: d.properties.correlationId },
        // 3.10 returns a mandatory reply to direct reply-to as unroutable although it delivers it.
        mandatory: false,
      });
      d.ack();
    });
    for (const id of ["a", "b", "c"]) {
      await requester.publishRequest({
        exchange: "",
        routingKey: name,
        content: Buffer.from(`ping-${id}`),
        properties: { headers: {}, correlationId: id, replyTo: requester.replyTo },
        mandatory: true,
      });
    }
    const deadline = Date.now() + 5000;
    while (replies.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(replies.sort()).toEqual(["a:PING-A", "b:PING-B", "c:PING-C"]);
  });
});
