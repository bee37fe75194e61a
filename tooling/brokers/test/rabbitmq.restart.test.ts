import { randomUUID } from "node:crypto";
import amqp from "amqplib";
import { describe, expect, it } from "vitest";
import { waitFor } from "../src/process.mjs";
import { exclusive, logTail, management, restart } from "../src/rabbitmq.mjs";
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
        // Seen once in CI (3.10.8): the first read after the restart answered 404 for the queue,
        // with no log kept to tell a late recovery from a lost declaration. So wait for the
        // management API to list the queue, and if it never does, fail with the node's log.
        await waitFor(() => management(`/api/queues/%2F/${queue}`).then((q) => q?.name === queue), {
          timeoutMs: 60_000,
          intervalMs: 500,
          what: `the durable queue ${queue}`,
        }).catch((error: Error) => {
          throw new Error(`${error.message} after the SIGKILL\n${logTail()}`);
        });

        const after = await amqp.connect(url);
        after.on("error", () => {});
        const channel = await after.createChannel();
        // A refused read rejects the get below; its channel's error event would only repeat it.
        channel.on("error", () => {});
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
