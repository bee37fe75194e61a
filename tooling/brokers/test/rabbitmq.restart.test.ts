import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { describe, expect, it } from "vitest";
import { exclusive, restart } from "../src/rabbitmq.mjs";
import { requireEnv } from "../src/requireEnv.mjs";

// Restarts the one RabbitMQ node every project's live tests share, so it runs in the restarts
// project (vitest.restart.config.ts), whose group starts once every other project's has ended.

describe("rabbitmq (a hard restart)", () => {
  it(
    // A classic queue: a quorum queue declared under a second before a SIGKILL can come back
    // without its Raft member on 3.10 (see the README), which is the server's, not this tool's.
    "a durable queue's confirmed persistent messages survive a SIGKILL of the node",
    () =>
      exclusive(async () => {
        const url = requireEnv("RABBITMQ_URL");
        const queue = `restart-${randomUUID()}`;
        const before = await amqp.connect(url);
        before.on("error", () => {});
        const publish = await before.createConfirmChannel();
        await publish.assertQueue(queue, { durable: true });
        for (let i = 0; i < 20; i++)
          publish.sendToQueue(queue, Buffer.from(String(i)), { persistent: true });
        await publish.waitForConfirms();
        await before.close();

        await restart({ hard: true });

        const after = await amqp.connect(url);
        const channel = await after.createChannel();
        const bodies: string[] = [];
        for (;;) {
          const message = await channel.get(queue, { noAck: true });
          if (message === false) break;
          bodies.push(message.content.toString());
        }
        expect(bodies).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
        await channel.deleteQueue(queue);
        await after.close();
      }),
    180_000,
  );
});
