// The metrics as Prometheus sees them: a real Prometheus server scrapes the app's /metrics (served
// by health's serveHttp on 127.0.0.1) every second, after known traffic, and every count is read
// back exactly through its query API. Once on the memory broker, once on a real Redis server; and a
// Redis stream subscriber's backlog, with entries held in handlers and a retry parked for later.
import { MemoryBroker, RustStream } from "@ruststream/core";
import { type HttpServer, serveHttp } from "@ruststream/health";
import { RedisBroker, RedisStream } from "@ruststream/redis";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, test } from "vitest";
import { prometheusMetrics } from "../src/index.js";
import { type Prometheus, startPrometheus } from "./prometheus.js";
import { read } from "./scrape.js";
import { expectedCounts, type Shop, shop } from "./shop.js";

let prometheus: Prometheus | undefined;
let server: HttpServer | undefined;
afterEach(async () => {
  await prometheus?.stop();
  await server?.close();
  prometheus = undefined;
  server = undefined;
});

/** Runs the shop's traffic with its metrics scraped, and checks every series Prometheus holds. */
async function scrapeShop(
  subject: Shop,
  names: { orders: string; receipts: string; dlq: string },
  broker: string,
): Promise<void> {
  const metrics = prometheusMetrics(subject.app);
  server = await serveHttp({ port: 0, routes: metrics.routes });
  prometheus = await startPrometheus(server.url);
  const running = await subject.app.start();
  await subject.traffic(running);
  await prometheus.scrapedAfter(Date.now());

  const p = prometheus;
  const expected = expectedCounts(names);
  expect(await read(p, "ruststream_messages_consumed_total", ["name", "status"])).toEqual(
    expected.consumed,
  );
  // Prometheus keeps every outcome's series, the ones at zero too: compare those that counted.
  expect(await read(p, "ruststream_messages_settled_total > 0", ["name", "outcome"])).toEqual(
    expected.settled,
  );
  expect(await read(p, "ruststream_consume_duration_seconds_count", ["name"])).toEqual(
    expected.durationCount,
  );
  // Buckets are cumulative and end in +Inf at the count.
  const inf = await read(p, 'ruststream_consume_duration_seconds_bucket{le="+Inf"}', ["name"]);
  expect(inf).toEqual(expected.durationCount);
  const first = await read(p, 'ruststream_consume_duration_seconds_bucket{le="0.0005"}', ["name"]);
  expect(first.orders).toBeLessThanOrEqual(expected.durationCount.orders);
  expect(await read(p, "ruststream_messages_published_total > 0", ["name", "status"])).toEqual(
    expected.published,
  );
  expect(await read(p, "ruststream_redeliveries_total", ["name"])).toEqual(expected.redeliveries);
  expect(await read(p, "ruststream_decode_failures_total", ["name"])).toEqual(
    expected.decodeFailures,
  );
  expect(await read(p, "ruststream_dead_letters_total", ["name", "destination"])).toEqual(
    expected.deadLetters,
  );
  expect(await read(p, "ruststream_messages_in_flight", ["name"])).toEqual({ orders: 0, audit: 0 });
  expect(await read(p, "ruststream_broker_connected", ["broker"])).toEqual({ [broker]: 1 });
  expect(await read(p, "ruststream_broker_connection_state", ["broker", "state"])).toEqual(
    connectionState(broker, "connected"),
  );

  // The endpoint outlives the app: a stopped app's broker reads 0, its connection closed.
  await running.stop();
  await p.scrapedAfter(Date.now());
  expect(await read(p, "ruststream_broker_connected", ["broker"])).toEqual({ [broker]: 0 });
  expect(await read(p, "ruststream_broker_connection_state", ["broker", "state"])).toEqual(
    connectionState(broker, "closed"),
  );
}

/** The connection-state series of `broker` in `state`: 1 there, 0 on the other states. */
function connectionState(broker: string, state: string): Record<string, number> {
  return Object.fromEntries(
    ["connected", "reconnecting", "lost", "closed"].map((s) => [
      `${broker} ${s}`,
      s === state ? 1 : 0,
    ]),
  );
}

describe("metrics scraped by Prometheus", () => {
  test("on the memory broker: every count exact", async () => {
    const names = { orders: "orders", receipts: "receipts", dlq: "orders-dlq" };
    await scrapeShop(shop(new MemoryBroker(), "orders", "receipts", names), names, "memory");
  });

  test("on a real Redis server (streams): every count exact", async () => {
    const url = requireEnv("REDIS_URL");
    const run = uniqueName("metrics");
    const names = { orders: `${run}.orders`, receipts: `${run}.receipts`, dlq: `${run}.dlq` };
    const broker = new RedisBroker({ url, group: "shop" });
    const subject = shop(
      broker,
      new RedisStream(names.orders, { start: "beginning" }),
      new RedisStream(names.receipts, { start: "beginning" }),
      names,
    );
    await scrapeShop(subject, names, "redis");
  });

  test("a Redis stream's backlog, as Prometheus reads it: held entries leased, a parked retry scheduled", async () => {
    const key = uniqueName("scraped-backlog");
    const entered: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const app = new RustStream({ name: "backlog", version: "1.0.0" }).broker(
      new RedisBroker({ url: requireEnv("REDIS_URL") }),
      (b) => {
        b.subscriber<string>(new RedisStream(key, { group: "scraped" }))
          .workers(2)
          // The failing entry's retry waits a minute in the stream's delayed set: past the test.
          .onFailure({ backoff: { initialMs: 60_000, maxMs: 60_000 } })
          .handle(async (m) => {
            if (m === "later") throw new Error("try again in a minute");
            entered.push(m);
            await held;
          });
      },
    );
    let parked = 0;
    app.observe((event) => {
      if (event.type === "outcome" && event.outcome === "retry-after") parked++;
    });
    const metrics = prometheusMetrics(app);
    server = await serveHttp({ port: 0, routes: metrics.routes });
    prometheus = await startPrometheus(server.url);
    const started = await app.start();
    try {
      await started.publish(key, "later");
      for (const m of ["a", "b"]) await started.publish(key, m);
      const deadline = Date.now() + 10_000;
      while (entered.length < 2 || parked < 1) {
        if (Date.now() > deadline) throw new Error(`entered ${entered}, parked ${parked}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await prometheus.scrapedAfter(Date.now());
      expect(await read(prometheus, `ruststream_backlog{name="${key}"}`, ["state"])).toEqual({
        ready: 0,
        leased: 2,
        scheduled: 1,
      });
    } finally {
      release();
      await started.stop();
    }
  });

  test("a handler still running is in flight, as Prometheus reads it", async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let running = 0;
    const app = new RustStream({ name: "slow", version: "1.0.0" }).broker(
      new MemoryBroker(),
      (b) => {
        b.subscriber("jobs")
          .workers(4)
          .handle(async () => {
            running++;
            await released;
          });
      },
    );
    const metrics = prometheusMetrics(app);
    server = await serveHttp({ port: 0, routes: metrics.routes });
    prometheus = await startPrometheus(server.url);
    const started = await app.start();
    for (let i = 0; i < 3; i++) await started.publish("jobs", i);
    while (running < 3) await new Promise((r) => setTimeout(r, 5));
    await prometheus.scrapedAfter(Date.now());
    expect(await read(prometheus, "ruststream_messages_in_flight", ["name"])).toEqual({ jobs: 3 });
    release();
    await started.whenIdle();
    await prometheus.scrapedAfter(Date.now());
    expect(await read(prometheus, "ruststream_messages_in_flight", ["name"])).toEqual({ jobs: 0 });
    expect(
      await read(prometheus, "ruststream_messages_consumed_total", ["name", "status"]),
    ).toEqual({ "jobs ack": 3, "jobs nack": 0 });
    await started.stop();
  });
});
