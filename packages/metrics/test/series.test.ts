// The series as the registry holds them, without a Prometheus server: what the scrape test does not
// reach (a broker-moved dead letter, a registry of the user's own, one registry per app).
import { isRustStreamError, MemoryBroker, MemoryQueue, RustStream } from "@ruststream/core";
import { Counter, Registry } from "prom-client";
import { expect, test } from "vitest";
import { BacklogReading } from "../src/backlogReading.js";
import { metricNames, prometheusMetrics } from "../src/index.js";
import { registerSeries } from "../src/series.js";
import { Tally } from "../src/tally.js";

async function values(registry: Registry, name: string): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) out[Object.values(v.labels).join(" ")] = v.value;
  return out;
}

test("dead letters the broker moves itself are counted, beside those the runtime publishes", async () => {
  const app = new RustStream({ name: "jobs", version: "1.0.0" }).broker(new MemoryBroker(), (b) => {
    b.subscriber(new MemoryQueue("jobs"))
      .maxAttempts(2)
      .deadLetter("jobs-dlq")
      .handle(() => {
        throw new Error("always");
      });
    b.subscriber("tasks")
      .maxAttempts(1)
      .deadLetter("tasks-dlq")
      .handle(() => {
        throw new Error("always");
      });
  });
  const metrics = prometheusMetrics(app);
  const running = await app.start();
  await running.publish("jobs", 1);
  await running.publish("tasks", 1);
  const deadline = Date.now() + 5000;
  while (Object.keys(await values(metrics.registry, metricNames.deadLetters)).length < 2) {
    if (Date.now() > deadline) throw new Error("no dead letters counted");
    await new Promise((r) => setTimeout(r, 10));
  }
  await running.whenIdle();
  expect(await values(metrics.registry, metricNames.deadLetters)).toEqual({
    "jobs jobs-dlq": 1, // moved by the memory queue at its cap, on the runtime's nack
    "tasks tasks-dlq": 1, // published by the runtime
  });
  // The broker's move is no publish of ours; the runtime's copy is.
  expect(await values(metrics.registry, metricNames.published)).toMatchObject({
    "tasks-dlq ok": 1,
  });
  expect(Object.keys(await values(metrics.registry, metricNames.published))).not.toContain(
    "jobs-dlq ok",
  );
  await running.stop();
});

/** An app of one subscriber, `in`, whose tests report work beside it (an outbox relay's, say). */
function relayApp(): RustStream {
  return new RustStream({ name: "relay", version: "1.0.0" }).broker(new MemoryBroker(), (b) => {
    b.subscriber("in").handle(() => {});
  });
}

test("failures of work beside the handlers are counted by source, and make no subscriber", async () => {
  const app = relayApp();
  const metrics = prometheusMetrics(app);
  const running = await app.start();
  // None yet: the series holds no sample until a failure comes.
  expect(await values(metrics.registry, metricNames.backgroundFailures)).toEqual({});
  const error = new Error("claiming rows failed");
  running.reportBackgroundFailure({ source: "outbox:kafka", error });
  running.reportBackgroundFailure({ source: "outbox:kafka", error });
  running.reportBackgroundFailure({ source: "outbox:redis", error });
  expect(await values(metrics.registry, metricNames.backgroundFailures)).toEqual({
    "outbox:kafka": 2,
    "outbox:redis": 1,
  });
  expect(await metrics.text()).toContain(
    'ruststream_background_failures_total{source="outbox:kafka"} 2',
  );
  // A source is no subscriber: the consumer series name only the app's subscriber.
  expect(Object.keys(await values(metrics.registry, metricNames.inFlight))).toEqual(["in"]);
  await running.stop();
});

test("the sources failing now: 1 from a failure to its recovery, then 0, the failure counter kept; a new start clears them", async () => {
  const app = relayApp();
  const metrics = prometheusMetrics(app);
  const running = await app.start();
  expect(await values(metrics.registry, metricNames.backgroundFailing)).toEqual({});
  const error = new Error("the outbox connection is reconnecting");
  running.reportBackgroundFailure({ source: "outbox:kafka", error });
  running.reportBackgroundFailure({ source: "outbox:redis", error });
  expect(await values(metrics.registry, metricNames.backgroundFailing)).toEqual({
    "outbox:kafka": 1,
    "outbox:redis": 1,
  });
  running.reportBackgroundRecovered({ source: "outbox:kafka" });
  expect(await values(metrics.registry, metricNames.backgroundFailing)).toEqual({
    "outbox:kafka": 0,
    "outbox:redis": 1,
  });
  expect(await metrics.text()).toContain('ruststream_background_failing{source="outbox:redis"} 1');
  expect(await values(metrics.registry, metricNames.backgroundFailures)).toEqual({
    "outbox:kafka": 1,
    "outbox:redis": 1,
  });
  await running.stop();
  const again = await app.start();
  expect(await values(metrics.registry, metricNames.backgroundFailing)).toEqual({
    "outbox:kafka": 0,
    "outbox:redis": 0,
  });
  await again.stop();
});

test("a registry of the user's own serves their metrics and ours together", async () => {
  const registry = new Registry();
  new Counter({ name: "my_thing_total", help: "mine", registers: [registry] }).inc(7);
  const app = new RustStream({ name: "svc", version: "1.0.0" }).broker(new MemoryBroker(), (b) => {
    b.subscriber("in").handle(() => {});
  });
  const metrics = prometheusMetrics(app, { registry });
  expect(metrics.registry).toBe(registry);
  const running = await app.start();
  await running.publish("in", 1);
  await running.whenIdle();
  const answer = await metrics.routes["/metrics"]!();
  expect(answer.status).toBe(200);
  expect(answer.contentType).toBe("text/plain; version=0.0.4; charset=utf-8");
  expect(answer.body).toContain("my_thing_total 7");
  expect(answer.body).toContain('ruststream_messages_consumed_total{name="in",status="ack"} 1');
  expect(answer.body).toContain('ruststream_consume_duration_seconds_count{name="in"} 1');
  expect(await metrics.text()).toContain('ruststream_broker_connected{broker="memory"} 1');
  await running.stop();

  // A second app on the same registry would mix its counts into the first's: refused.
  const error = (() => {
    try {
      prometheusMetrics(app, { registry });
    } catch (e) {
      return e;
    }
  })();
  expect(isRustStreamError(error, "invalid-argument")).toBe(true);
  expect(String(error)).toMatch(
    /already holds ruststream_messages_consumed_total: call prometheusMetrics\(\) once per registry/,
  );
});

test("a handler that settles its delivery itself counts as ack when it succeeds, nack when it throws", async () => {
  const app = new RustStream({ name: "svc", version: "1.0.0" }).broker(new MemoryBroker(), (b) => {
    b.subscriber("in")
      .maxAttempts(1)
      .handle((m, ctx) => {
        ctx.delivery.ack();
        if (m === "throws") throw new Error("after settling");
      });
  });
  const metrics = prometheusMetrics(app);
  const running = await app.start();
  await running.publish("in", "fine");
  await running.publish("in", "throws");
  await new Promise((r) => setTimeout(r, 50));
  await running.whenIdle();
  expect(await values(metrics.registry, metricNames.consumed)).toEqual({
    "in ack": 1,
    "in nack": 1,
  });
  expect(await values(metrics.registry, metricNames.settled)).toMatchObject({
    "in settled-by-handler": 2,
  });
  await running.stop();
});

test("a broker connection's state: 1 on the state it is in, 0 on the others; connected only while connected", async () => {
  const tally = new Tally();
  const registry = new Registry();
  registerSeries(registry, tally, new BacklogReading(tally, 1000));
  const now = async () => ({
    connected: await values(registry, metricNames.brokerConnected),
    state: Object.fromEntries(
      Object.entries(await values(registry, metricNames.brokerConnectionState)).filter(
        ([, value]) => value === 1,
      ),
    ),
  });
  const change = (broker: string, state: "connected" | "reconnecting" | "lost" | "closed") =>
    tally.observe({ type: "broker-connection", broker, kind: "redis", state });
  change("redis", "connected");
  change("redis-2", "connected");
  expect(await values(registry, metricNames.brokerConnectionState)).toEqual({
    "redis connected": 1,
    "redis reconnecting": 0,
    "redis lost": 0,
    "redis closed": 0,
    "redis-2 connected": 1,
    "redis-2 reconnecting": 0,
    "redis-2 lost": 0,
    "redis-2 closed": 0,
  });
  change("redis-2", "reconnecting");
  expect(await now()).toEqual({
    connected: { redis: 1, "redis-2": 0 },
    state: { "redis connected": 1, "redis-2 reconnecting": 1 },
  });
  change("redis-2", "lost");
  expect(await now()).toEqual({
    connected: { redis: 1, "redis-2": 0 },
    state: { "redis connected": 1, "redis-2 lost": 1 },
  });
  change("redis-2", "connected");
  change("redis", "closed");
  expect(await now()).toEqual({
    connected: { redis: 0, "redis-2": 1 },
    state: { "redis closed": 1, "redis-2 connected": 1 },
  });
});
