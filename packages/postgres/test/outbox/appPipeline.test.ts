import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { HeaderMap, type RuntimeEvent, RustStream } from "@ruststream/core";
import { tracing } from "@ruststream/otel";
import { RedisBroker, RedisStream } from "@ruststream/redis";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresBroker, type PostgresOutbox, postgresHeaderNames } from "../../src/index.js";
import { waitUntil } from "../support.js";
import { inTransaction, redisCli, take } from "./support.js";

// The relay in an app (outbox.relayIn), on the real PostgreSQL relaying to the real Redis: its
// publishes go through the app's publish path, so @ruststream/otel's middleware gives each a send
// span and its traceparent, and each is a publish event of the app (what @ruststream/metrics counts:
// its own tests count those events); and the app stops the relay as its
// stop begins, so a publish in flight finishes on a connection still open and its row is marked.

const table = "outbox_live";

let url: string;
let redisUrl: string;
let sql: pg.Client;
let outbox: PostgresOutbox;

beforeAll(async () => {
  url = requireEnv("POSTGRES_URL");
  redisUrl = requireEnv("REDIS_URL");
  sql = new pg.Client({ connectionString: url });
  await sql.connect();
  outbox = await new PostgresBroker({ url, table, ensureSchema: true }).connectOutbox();
});

afterAll(async () => {
  await outbox?.close();
  await sql?.end();
});

async function rowsOf(label: string): Promise<number> {
  const { rows } = await sql.query(`SELECT 1 FROM ${table}_outbox WHERE queue = $1`, [label]);
  return rows.length;
}

/** The first `count` messages of the stream `name`, read on a connection of the test's own. */
async function readStream(name: string, count: number) {
  const connected = await new RedisBroker({ url: redisUrl, group: "outbox-app-tests" }).connect();
  try {
    const subscription = await connected.subscribe(
      new RedisStream(name, { group: "outbox-app-tests", start: "beginning" }),
    );
    try {
      return await take(subscription, count);
    } finally {
      await subscription.close();
    }
  } finally {
    await connected.shutdown();
  }
}

describe("the outbox relay in an app", () => {
  it("publishes through the app's middleware and events: a send span's traceparent on each message, each counted", async () => {
    const label = uniqueName("events");
    const topic = uniqueName("orders");
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const redis = new RedisBroker({ url: redisUrl });
    const app = new RustStream({ name: "outbox-traced", version: "1.0.0" })
      .broker(redis)
      .use(tracing({ tracerProvider: provider }))
      .afterStartup(async (running) => {
        await outbox.relayIn(running, { brokers: { [label]: redis }, pollMs: 100 });
      });
    const published: RuntimeEvent[] = [];
    app.observe((event: RuntimeEvent) => {
      if (event.type === "publish" && event.name === topic) published.push(event);
    });
    const running = await app.start();
    try {
      // One message written inside a trace (the writer put its context in the headers), one not.
      const writerTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
      const writerSpan = "00f067aa0ba902b7";
      const ids: Record<string, string> = {};
      await inTransaction(url, async (tx) => {
        const headers = new HeaderMap();
        headers.set("traceparent", `00-${writerTrace}-${writerSpan}-01`);
        ids.traced = await outbox.publish(
          tx,
          { broker: label, name: topic },
          { payload: bytes("in the writer's trace"), headers, partitionKey: "k" },
        );
        ids.plain = await outbox.publish(
          tx,
          { broker: label, name: topic },
          { payload: bytes("no trace of its own"), partitionKey: "k" },
        );
      });
      const got = await readStream(topic, 2);
      await waitUntil(20_000, "both rows marked sent", async () => (await rowsOf(label)) === 0);

      const spans = exporter.getFinishedSpans().filter((s) => s.name === `send ${topic}`);
      expect(spans).toHaveLength(2);
      // In the order of their key: the traced message first.
      expect(got.map((d) => text(d.payload))).toEqual([
        "in the writer's trace",
        "no trace of its own",
      ]);
      expect(got.map((d) => d.headers.getString(postgresHeaderNames.outboxId))).toEqual([
        ids.traced,
        ids.plain,
      ]);
      for (const delivery of got) {
        // The outbox's own routing header stays in the table.
        expect(delivery.headers.has(postgresHeaderNames.outboxDestination)).toBe(false);
        const traceparent = delivery.headers.getString("traceparent");
        const span = spans.find(
          (s) => traceparent === `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`,
        );
        expect(span, `a send span for ${traceparent}`).toBeDefined();
        expect(span?.attributes["ruststream.publish.purpose"]).toBe("app");
      }
      // The message written in a trace is sent as its child; the other starts a trace of its own.
      const [traced, plain] = got.map((d) => d.headers.getString("traceparent") as string);
      expect(traced?.split("-")[1]).toBe(writerTrace);
      const tracedSpan = spans.find((s) => s.spanContext().traceId === writerTrace);
      expect(tracedSpan?.parentSpanContext?.spanId).toBe(writerSpan);
      expect(plain?.split("-")[1]).not.toBe(writerTrace);

      expect(published.map((e) => e.type === "publish" && e.ok && e.purpose)).toEqual([
        "app",
        "app",
      ]);
    } finally {
      await running.stop();
    }
  });

  it("refuses brokers missing or not the app's, naming the fix, and starts nothing", async () => {
    const redis = new RedisBroker({ url: redisUrl });
    const running = await new RustStream({ name: "outbox-refused", version: "1.0.0" })
      .broker(redis)
      .start();
    try {
      await expect(outbox.relayIn(running, {} as never)).rejects.toThrow(
        /needs the app's broker per label, for example \{ brokers: \{ kafka \} \}/,
      );
      const stranger = new RedisBroker({ url: redisUrl });
      await expect(outbox.relayIn(running, { brokers: { x: stranger } })).rejects.toThrow(
        /not registered with this app/,
      );
    } finally {
      await running.stop();
    }
    await expect(outbox.relayIn(running, { brokers: { x: redis } })).rejects.toMatchObject({
      code: "closed",
    });
  });

  it("is stopped by the app's stop before the app closes its connections: the publish in flight lands and its row is marked", async () => {
    const label = uniqueName("events");
    const topic = uniqueName("orders");
    const redis = new RedisBroker({ url: redisUrl });
    const steps: string[] = [];
    // The relay's publish waits in the app's publish middleware until the test lets it go, after
    // the app's stop began.
    let held!: () => void;
    const publishHeld = new Promise<void>((resolve) => {
      held = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const app = new RustStream({ name: "outbox-stopped", version: "1.0.0" })
      .broker(redis)
      .use({
        publish: async (message, next) => {
          held();
          await released;
          return next(message);
        },
      })
      .afterStartup(async (running) => {
        await outbox.relayIn(running, { brokers: { [label]: redis }, pollMs: 100 });
      });
    app.observe((event: RuntimeEvent) => {
      if (event.type === "app-state" && event.state === "stopping") steps.push("app stopping");
      if (event.type === "publish")
        steps.push(`publish ${event.name} ${event.ok ? "ok" : "failed"}`);
      if (event.type === "broker-connection" && event.state === "closed") {
        steps.push(`${event.broker} closed`);
      }
    });
    const running = await app.start();
    await inTransaction(url, async (tx) => {
      await outbox.publish(tx, { broker: label, name: topic }, { payload: bytes("in flight") });
    });
    await publishHeld;
    const stopping = running.stop();
    release();
    await stopping;

    expect(steps).toEqual(["app stopping", `publish ${topic} ok`, "redis closed"]);
    // Confirmed, then marked sent (deleted) before the stop resolved; on the stream once.
    expect(await rowsOf(label)).toBe(0);
    expect(await redisCli(redisUrl, "XLEN", topic)).toBe("1");
  });
});
