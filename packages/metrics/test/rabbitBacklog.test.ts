// The backlog gauge of a RabbitMQ quorum queue, through a real HTTP scrape on the shared node: its
// ready messages and its dead letter's; once the dead letter is deleted under the app, the scrape
// still succeeds, without that subscriber's sample and with the failure counted.
import { RustStream } from "@ruststream/core";
import { serveHttp } from "@ruststream/health";
import { RabbitBroker, RabbitQuorumQueue } from "@ruststream/rabbitmq";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { brokers } from "@ruststream/tooling-testkit/brokers";
import { expect, test } from "vitest";
import { prometheusMetrics } from "../src/index.js";
import { backlogLines, until } from "./scrapeSteps.js";

test("a scrape of an app on RabbitMQ shows its quorum queue's ready and dead-lettered counts; its dead letter deleted, the scrape goes on and counts the failure", async () => {
  const queue = uniqueName("gauge-rabbit");
  const dlq = `${queue}.dlq`;
  const entered: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const app = new RustStream({ name: "gauge-rabbit", version: "1.0.0" }).broker(
    new RabbitBroker({ url: requireEnv("RABBITMQ_URL"), declare: true }),
    (b) => {
      // One message in hand at a time: held in its handler, the node sends nothing more.
      b.subscriber<string>(
        new RabbitQuorumQueue(queue, { prefetch: 1, arguments: { "x-expires": 120_000 } }),
      )
        .maxAttempts(3)
        .deadLetter(dlq)
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
    await running.publish(queue, "held");
    await until("the handler", () => entered.length === 1);
    await running.publish(queue, "a");
    await running.publish(queue, "b");
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(backlogLines(text, queue)).toEqual(
      [
        `ruststream_backlog{name="${queue}",state="ready"} 2`,
        `ruststream_backlog{name="${queue}",state="dead-lettered"} 0`,
      ].sort(),
    );
    await brokers.rabbitmq.management(`/api/queues/%2F/${encodeURIComponent(dlq)}`, {
      method: "DELETE",
    });
    const scrape = await fetch(`${server.url}/metrics`);
    expect(scrape.status).toBe(200);
    const after = await scrape.text();
    expect(backlogLines(after, queue)).toEqual([
      `ruststream_backlog_failures_total{name="${queue}",reason="error"} 1`,
    ]);
    expect(after).toContain(`ruststream_messages_in_flight{name="${queue}"} 1`);
  } finally {
    release();
    await running.stop();
    await server.close();
  }
});
