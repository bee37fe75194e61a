// The backlog gauge of a Kafka consumer-group subscriber, read through a scrape of the app's
// metrics text on the shared Kafka cluster: the group's lag (`ready`) while its handler holds the
// first record unsettled, so the group commits nothing; once released and settled, 0.
import { RustStream } from "@ruststream/core";
import { KafkaBroker, KafkaTopic } from "@ruststream/kafka";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect, test } from "vitest";
import { prometheusMetrics } from "../src/index.js";
import { backlogLines, until } from "./scrapeSteps.js";

test("a scrape of an app on Kafka shows its group's lag as ready: 4 with the first record held, 0 once all are settled", async () => {
  const topic = uniqueName("kafkagauge");
  const entered: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const app = new RustStream({ name: "kafkagauge", version: "1.0.0" }).broker(
    new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS"), engine: "kafkajs" }),
    (b) => {
      b.subscriber<string>(
        new KafkaTopic(topic, {
          group: `g-${topic}`,
          commit: "tracked",
          create: { partitions: 1 },
        }),
      ).handle(async (m) => {
        entered.push(m);
        await held;
      });
    },
  );
  const metrics = prometheusMetrics(app);
  const running = await app.start();
  try {
    for (const m of ["held", "a", "b", "c"]) await running.publish(topic, m);
    await until("the handler", () => entered.length >= 1);
    // Nothing settled: the group's committed offset is still where it started (the end at
    // assignment, 0), so all four wait, whichever of them the app has fetched.
    expect(backlogLines(await metrics.text())).toEqual([
      `ruststream_backlog{name="${topic}",state="ready"} 4`,
    ]);
    release();
    await until("all four handled", () => entered.length === 4);
    const ready0 = `ruststream_backlog{name="${topic}",state="ready"} 0`;
    await until("the commits", async () => backlogLines(await metrics.text()).includes(ready0));
    expect(backlogLines(await metrics.text())).toEqual([ready0]);
  } finally {
    release();
    await running.stop();
  }
});
