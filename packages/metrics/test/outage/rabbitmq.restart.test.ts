// The RabbitMQ node every project's live tests share, stopped (a clean shutdown) under a running app
// and started again on its data: readiness and the connection-state series follow it. It runs in the
// restarts group (vitest.restart.config.ts), once no other test uses the node, and holds it alone.
import { RabbitBroker, RabbitQueue } from "@ruststream/rabbitmq";
import { brokers, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { test } from "vitest";
import { expectRecovery, subscribedApp } from "./outage.js";

test("rabbitmq: its node stopped, the app is not ready and the series says reconnecting; started again, both recover and a message is handled", () =>
  brokers.rabbitmq.exclusive(async () => {
    const queue = uniqueName("outage");
    await expectRecovery({
      // The default publish policy: the default exchange, the message's name the queue's.
      ...subscribedApp(
        new RabbitBroker({ url: requireEnv("RABBITMQ_URL"), declare: true }),
        new RabbitQueue(queue),
        queue,
      ),
      broker: "rabbitmq",
      outage: (whileDown) => brokers.rabbitmq.restart({ whileDown }),
      deadlineMs: 120_000,
    });
    // The queue is durable and the node shared: the app stopped, it goes.
    await brokers.rabbitmq.management(`/api/queues/%2F/${encodeURIComponent(queue)}`, {
      method: "DELETE",
    });
  }));
