// The README's example, as it is written there (a free port on 127.0.0.1 instead of 8080 on all).
import { MemoryBroker, RustStream } from "@ruststream/core";
import { expect, test } from "vitest";
import { health, serveHttp } from "../src/index.js";

test("the README's example", async () => {
  const app = new RustStream({ name: "orders", version: "1.0.0" });
  app.broker(new MemoryBroker(), (b) => {
    b.subscriber("orders").handle(() => {});
  });

  const probes = health(app);
  const server = await serveHttp({ port: 0, routes: probes.routes });

  expect(probes.ready).toBe(false);
  const running = await app.start();
  expect(probes.ready).toBe(true);
  const ready = await fetch(`${server.url}/health/ready`);
  expect([ready.status, await ready.text()]).toEqual([200, '{"ready":true,"state":"ready"}\n']);

  await running.stop();
  const stopped = await fetch(`${server.url}/health/ready`);
  expect([stopped.status, await stopped.json()]).toEqual([
    503,
    { ready: false, state: "stopped", why: ["the app has stopped"] },
  ]);
  await server.close();
});
