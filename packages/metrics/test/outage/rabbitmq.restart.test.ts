// The RabbitMQ node every project's live tests share, stopped (a clean shutdown) under a running app
// and started again on its data: readiness and the connection-state series follow it. It runs in the
// restarts group (vitest.restart.config.ts), once no other test uses the node, and holds it alone.
import { RustStream } from "@ruststream/core";
import { RabbitBroker, RabbitQueue } from "@ruststream/rabbitmq";
import { brokers, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { expect, test } from "vitest";
import { throughOutage } from "./outage.js";

test("rabbitmq: its node stopped, the app is not ready and the series says reconnecting; started again, both recover and a message is handled", () =>
  brokers.rabbitmq.exclusive(async () => {
    const queue = uniqueName("outage");
    const handled: unknown[] = [];
    const app = new RustStream({ name: uniqueName("outage"), version: "1.0.0" }).broker(
      new RabbitBroker({ url: requireEnv("RABBITMQ_URL"), declare: true }),
      (b) => {
        b.subscriber(new RabbitQueue(queue)).handle((message) => {
          handled.push(message);
        });
      },
    );
    const seen = await throughOutage({
      app,
      handled,
      broker: "rabbitmq",
      outage: (whileDown) => brokers.rabbitmq.restart({ whileDown }),
      // The default publish policy: the default exchange, the message's name the queue's.
      publish: async (running, value) => {
        await running.publish(queue, value);
      },
      deadlineMs: 120_000,
    });
    expect(seen.before.ready).toEqual({ status: 200, body: { ready: true, state: "ready" } });
    expect(seen.during.ready.body.why).toEqual([
      expect.stringMatching(/^broker rabbitmq is reconnecting: /),
    ]);
    expect(seen.during.live.status).toBe(200);
    expect(seen.after.ready.status).toBe(200);
    expect(handled).toEqual([{ after: "recovery" }]);
    // The queue is durable and the node shared: the app stopped, it goes.
    await brokers.rabbitmq.management(`/api/queues/%2F/${encodeURIComponent(queue)}`, {
      method: "DELETE",
    });
  }));
