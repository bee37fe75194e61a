// The backlog gauge of a Redis stream's consumer group, through a real HTTP scrape on the shared
// server: the entries its consumers hold unacked are leased, those none was handed are ready.
import { RustStream } from "@ruststream/core";
import { serveHttp } from "@ruststream/health";
import { RedisBroker, RedisStream } from "@ruststream/redis";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect, test } from "vitest";
import { prometheusMetrics } from "../src/index.js";
import { until } from "./scrapeSteps.js";

test("a scrape of an app on a Redis stream shows its group's entries held in handlers as leased and none ready", async () => {
  const key = uniqueName("gauge-redis");
  const entered: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const app = new RustStream({ name: "gauge-redis", version: "1.0.0" }).broker(
    new RedisBroker({ url: requireEnv("REDIS_URL") }),
    (b) => {
      b.subscriber<string>(new RedisStream(key, { group: "gauge" }))
        .workers(3)
        .handle(async (m) => {
          entered.push(m);
          await held;
        });
    },
  );
  const metrics = prometheusMetrics(app);
  const server = await serveHttp({ port: 0, routes: metrics.routes });
  const running = await app.start();
  try {
    for (const m of ["a", "b", "c"]) await running.publish(key, m);
    // All three in their handlers: each was handed to the group's consumer, none acked.
    await until("the three handlers", () => entered.length === 3);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const lines = text
      .split("\n")
      .filter((line) => line.startsWith("ruststream_backlog") && line.includes(`name="${key}"`))
      .sort();
    expect(lines).toEqual([
      `ruststream_backlog{name="${key}",state="leased"} 3`,
      `ruststream_backlog{name="${key}",state="ready"} 0`,
      // No retry parked in the stream's delayed set.
      `ruststream_backlog{name="${key}",state="scheduled"} 0`,
    ]);
  } finally {
    release();
    await running.stop();
    await server.close();
  }
});
