// RabbitMQ: a quorum queue of 512-byte JSON orders drained by the full app and by the raw amqplib
// loop a careful user writes, on the RabbitMQ of tooling/brokers, rows interleaved over rounds,
// each row and round in a process of its own (../rows/drainRounds.ts), its peak memory measured.
//
//   pnpm --filter @ruststream/tooling-bench bench:rabbitmq [count] [rounds] [rows] [file]
//
// rows: a comma list of rows.ts's keys (default raw,app); file: the results' name under results/
// (default rabbitmq.json for count >= 100k and rounds >= 5, else rabbitmq-quick.json). RABBITMQ_URL
// picks the node; without it tooling/brokers starts its own. Before every drain a fresh quorum
// queue is declared and filled with orders 0..count-1 (publisher confirms; untimed); after it the
// queue must hold nothing (every order acked) and no consumer, and is deleted.
import { ensureBrokers } from "@ruststream/tooling-testkit";
import amqp from "amqplib";
import { orderBytes } from "../redis/drain/order.js";
import { sourceRevision } from "../revision.js";
import { drainArgs } from "../rows/drainArgs.js";
import { runDrainBench } from "../rows/drainRounds.js";
import { expectDrained, fillQueue } from "./queues.js";
import { carefulPrefetch, type RabbitTrial, rabbitRows } from "./rows.js";

const args = drainArgs("rabbitmq", ["raw", "app"]);

if (process.env.RABBITMQ_URL === undefined) await ensureBrokers(["rabbitmq"]);
const url = process.env.RABBITMQ_URL;
if (url === undefined) throw new Error("no RabbitMQ: set RABBITMQ_URL, or start tooling/brokers");

const connection = await amqp.connect(url);
const confirms = await connection.createConfirmChannel();
let queues = 0;

async function fresh(_key: string, messages: number): Promise<RabbitTrial> {
  const queue = `bench.rabbitmq.${process.pid}.${queues++}`;
  await fillQueue(confirms, queue, messages);
  return { url: url!, queue, count: messages };
}

async function finish(where: string, { queue }: RabbitTrial): Promise<void> {
  await expectDrained(confirms, queue, where);
}

await runDrainBench<RabbitTrial>({
  title: `RabbitMQ ${connection.connection.serverProperties.version}, a quorum queue of ${orderBytes}-byte JSON orders`,
  scenario:
    "A pre-filled quorum queue of 512-byte JSON orders drained by the raw amqplib loop (consume, prefetch set, JSON.parse, ack each; or acks batched with multiple) and the full app (RabbitQuorumQueue, the same prefetch, typed handler, ack by the runtime); each row and round in a process of its own, its peak resident set measured",
  args,
  rowModule: new URL("./rows.ts", import.meta.url).href,
  rowName: rabbitRows.name,
  pairs: [
    ["app", "raw", 0.9],
    ["app", "raw-multiple", 0.9],
  ],
  fresh,
  finish,
  facts: {
    source: sourceRevision(["packages/core/src", "packages/rabbitmq/src"]),
    server: connection.connection.serverProperties.version,
    orderBytes,
    prefetch: carefulPrefetch,
  },
});
await connection.close();
