// The README's example, as it is written there (a free port instead of 9464).
import { MemoryBroker, RustStream } from "@ruststream/core";
import { health, serveHttp } from "@ruststream/health";
import { expect, test } from "vitest";
import { prometheusMetrics } from "../src/index.js";

test("the README's example", async () => {
  const app = new RustStream({ name: "orders", version: "1.0.0" });
  app.broker(new MemoryBroker(), (b) => {
    b.subscriber<{ id: number }>("orders")
      .reply("receipts")
      .handle((order) => ({ orderId: order.id }));
  });

  const metrics = prometheusMetrics(app);
  const probes = health(app);
  const server = await serveHttp({ port: 0, routes: { ...metrics.routes, ...probes.routes } });

  const running = await app.start();
  await running.publish("orders", { id: 1 });
  await running.whenIdle();

  const scrape = await fetch(`${server.url}/metrics`);
  expect(
    (await scrape.text()).includes(
      'ruststream_messages_consumed_total{name="orders",status="ack"} 1',
    ),
  ).toBe(true);
  expect((await fetch(`${server.url}/health/ready`)).status).toBe(200);

  await running.stop();
  await server.close();
});
