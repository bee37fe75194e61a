// RabbitMQ: a quorum or classic queue of 512-byte JSON orders drained by the full app and by the raw
// loops a careful user writes (amqplib, @cloudamqp/amqp-client), on the RabbitMQ of
// tooling/brokers, rows interleaved over rounds, each row and round in a process of its own
// (../rows/drainRounds.ts), its peak memory measured.
//
//   pnpm --filter @ruststream/tooling-bench bench:rabbitmq [count] [rounds] [rows] [file]
//
// rows: a comma list of rows.ts's keys (default raw,app), each on a quorum queue, or on a classic
// one as `<key>@classic` (raw-multiple@classic,app@classic); file: the results' name under results/
// (default rabbitmq.json for count >= 100k and rounds >= 5, else rabbitmq-quick.json). RABBITMQ_URL
// picks the node; without it tooling/brokers starts its own. Before every drain a fresh queue of
// the row's type is declared and filled with orders 0..count-1 (publisher confirms; untimed); after it the
// queue must hold nothing (every order acked) and no consumer, and is deleted.
import { ensureBrokers } from "@ruststream/tooling-testkit";
import amqp from "amqplib";
import { orderBytes } from "../redis/drain/order.js";
import { sourceRevision } from "../revision.js";
import { drainArgs } from "../rows/drainArgs.js";
import { type AppAgainstRaw, runDrainBench } from "../rows/drainRounds.js";
import { expectDrained, fillQueue, queueOfKey } from "./queues.js";
import { carefulPrefetch, type RabbitTrial, rabbitRows } from "./rows.js";

const args = drainArgs("rabbitmq", ["raw", "app"]);

if (process.env.RABBITMQ_URL === undefined) await ensureBrokers(["rabbitmq"]);
const url = process.env.RABBITMQ_URL;
if (url === undefined) throw new Error("no RabbitMQ: set RABBITMQ_URL, or start tooling/brokers");

const connection = await amqp.connect(url);
const confirms = await connection.createConfirmChannel();
let queues = 0;

async function fresh(key: string, messages: number): Promise<RabbitTrial> {
  const { type } = queueOfKey(key);
  const queue = `bench.rabbitmq.${process.pid}.${queues++}`;
  await fillQueue(confirms, queue, messages, type);
  return { url: url!, queue, count: messages, type };
}

/**
 * Each full app (this tree's, and any `app@<ref>` asked for) against each raw loop, on each queue
 * type (a pair shows when both rows ran), held to issue 42's target: the full app at 0.95 or more
 * of the raw consumer.
 */
const apps = [
  ...new Set(
    args.chosen
      .map((key) => queueOfKey(key))
      .filter(({ row }) => row === "app")
      .map(({ ref }) => (ref === undefined ? "app" : `app@${ref}`)),
  ),
];
const pairs: AppAgainstRaw[] = ["", "@classic"].flatMap((on) => [
  ...apps.flatMap((app) =>
    ["raw", "raw-multiple", "cloudamqp", "cloudamqp-multiple"].map(
      (raw): AppAgainstRaw => [`${app}${on}`, `${raw}${on}`, 0.95],
    ),
  ),
  // This tree's app over an earlier one's: the change, before and after.
  ...apps
    .filter((app) => app !== "app")
    .map((before): AppAgainstRaw => [`app${on}`, `${before}${on}`]),
]);

async function finish(where: string, { queue }: RabbitTrial): Promise<void> {
  await expectDrained(confirms, queue, where);
}

await runDrainBench<RabbitTrial>({
  title: `RabbitMQ ${connection.connection.serverProperties.version}, quorum and classic queues of ${orderBytes}-byte JSON orders`,
  scenario:
    "A pre-filled quorum (or classic, rows @classic) queue of 512-byte JSON orders drained by the raw loops of amqplib and @cloudamqp/amqp-client (consume, prefetch set, JSON.parse, ack each; or acks batched with multiple) and the full app (RabbitQuorumQueue or RabbitQueue, the same prefetch, typed handler, ack by the runtime); each row and round in a process of its own, its peak resident set measured",
  args,
  rowModule: new URL("./rows.ts", import.meta.url).href,
  rowName: rabbitRows.name,
  pairs,
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
