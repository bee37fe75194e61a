// RabbitMQ: the app's publish (RabbitBroker's default publish: the default exchange, mandatory,
// persistent, each publish resolving on the server's confirm) against amqplib's confirm channel
// (`sendToQueue` with the same properties: persistent, mandatory, the content type, the
// `amqp-partition-key` header, its confirm callback resolving each) and @cloudamqp/amqp-client's
// (`basicPublish` on a channel in confirm mode, the same properties, its promise resolving on the
// confirm), `depth` outstanding, onto a fresh quorum queue per run, its message count checked after.
// With RABBITMQ_AT=<git ref>, one more row: app.publish on `@ruststream/rabbitmq` as that ref had
// it (../packageAt.ts), for a change measured before and after in one run.
import { AMQPClient } from "@cloudamqp/amqp-client";
import * as thisTree from "@ruststream/rabbitmq";
import amqp from "amqplib";
import { packageAt } from "../packageAt.js";
import { appPublishRow, type OnFresh } from "./appRow.js";
import { bytesContentType, keyOf, payloadOf } from "./message.js";
import { expectStored, type PublishRow } from "./row.js";
import { windowed } from "./window.js";

const table = "RabbitMQ quorum queue";
let queues = 0;
/** How long a quorum queue's count may take to show the last confirmed publishes. */
const settleMs = 10_000;

export async function rabbitmqRows(url: string): Promise<PublishRow[]> {
  const ref = process.env.RABBITMQ_AT || undefined;
  const earlier =
    ref === undefined ? undefined : (await packageAt<typeof thisTree>("rabbitmq", ref)).module;
  const onFresh: OnFresh = async (row, count, publish) => {
    const connection = await amqp.connect(url);
    const admin = await connection.createChannel();
    const queue = `bench.publish.${process.pid}.${queues++}`;
    await admin.assertQueue(queue, { durable: true, arguments: { "x-queue-type": "quorum" } });
    const timed = await publish(queue);
    const deadline = performance.now() + settleMs;
    let stored = (await admin.checkQueue(queue)).messageCount;
    while (stored < count && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      stored = (await admin.checkQueue(queue)).messageCount;
    }
    expectStored(row, queue, stored, count);
    await admin.deleteQueue(queue);
    await connection.close();
    return timed;
  };
  return [
    {
      name: "raw amqplib confirm channel",
      broker: table,
      baseline: true,
      run: (count, depth) =>
        onFresh("raw amqplib confirm channel", count, async (queue) => {
          const connection = await amqp.connect(url);
          try {
            const channel = await connection.createConfirmChannel();
            return await windowed(
              count,
              depth,
              (i) =>
                new Promise<void>((resolve, reject) => {
                  channel.sendToQueue(
                    queue,
                    payloadOf(i),
                    {
                      persistent: true,
                      mandatory: true,
                      contentType: bytesContentType,
                      headers: { "amqp-partition-key": keyOf(i) },
                    },
                    (error) => (error ? reject(error) : resolve()),
                  );
                }),
            );
          } finally {
            await connection.close();
          }
        }),
    },
    {
      name: "raw @cloudamqp/amqp-client confirms",
      broker: table,
      baseline: true,
      run: (count, depth) =>
        onFresh("raw @cloudamqp/amqp-client confirms", count, async (queue) => {
          const connection = await new AMQPClient(url).connect();
          try {
            const channel = await connection.channel();
            await channel.confirmSelect();
            return await windowed(count, depth, (i) =>
              channel.basicPublish(
                "",
                queue,
                payloadOf(i),
                {
                  deliveryMode: 2,
                  contentType: bytesContentType,
                  headers: { "amqp-partition-key": keyOf(i) },
                },
                true,
              ),
            );
          } finally {
            await connection.close();
          }
        }),
    },
    appPublishRow(table, (app) => app.broker(new thisTree.RabbitBroker({ url })), onFresh),
    ...(earlier === undefined
      ? []
      : [
          appPublishRow(
            table,
            (app) => app.broker(new earlier.RabbitBroker({ url })),
            onFresh,
            `app.publish at ${ref}`,
          ),
        ]),
  ];
}
