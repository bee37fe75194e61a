// The in-process dispatch cost: the full app on the memory broker against a bare loop over an array of
// the same deliveries doing the same decode and settle. Rounds interleave the rows so drift in the
// machine (thermal, GC, other load) hits every row alike.
//
//   pnpm --filter @ruststream/tooling-bench bench [messages-per-round] [rounds]
import { writeFileSync } from "node:fs";
import {
  type Delivery,
  json,
  MemoryBroker,
  type MemoryPublisher,
  MemoryTopic,
  RustStream,
} from "@ruststream/core";
import { machine, summarize, tableLines } from "./stats.js";

const messages = Number(process.argv[2] ?? 300_000);
const rounds = Number(process.argv[3] ?? 7);

interface Order {
  readonly id: number;
  readonly sku: string;
  readonly qty: number;
}

const payloads = Array.from({ length: messages }, (_, id) =>
  json.encode({ id, sku: "apple", qty: 2 }),
);

async function filledBroker(topic: string): Promise<MemoryBroker> {
  const broker = new MemoryBroker({ retain: messages });
  const connected = await broker.connect();
  // The group exists before the publishes, so it starts at the first one.
  const warm = await connected.subscribe(
    new MemoryTopic(topic, { group: "bench", start: "start" }),
  );
  await warm.close();
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  for (const payload of payloads) await publisher.publish({ name: topic, payload });
  await connected.shutdown();
  return broker;
}

/** The full app: pull, decode, handler, (reply,) ack, through RustStream. Messages per second. */
async function fullApp(reply: boolean): Promise<number> {
  const broker = await filledBroker("orders");
  let count = 0;
  let began = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => {
    finished = resolve;
  });
  let sum = 0;
  const app = new RustStream({ name: "bench", version: "0" }).broker(broker, (b) => {
    const subscriber = b.subscriber<Order>(
      new MemoryTopic("orders", { group: "bench", start: "start" }),
    );
    const count1 = (order: Order) => {
      if (count === 0) began = performance.now();
      sum += order.qty;
      if (++count === messages) finished();
    };
    if (reply) {
      subscriber.reply("receipts").handle((order) => {
        count1(order);
        return { orderId: order.id };
      });
    } else {
      subscriber.handle((order) => {
        count1(order);
      });
    }
  });
  const running = await app.start();
  await done;
  await running.whenIdle();
  const elapsed = performance.now() - began;
  await running.stop();
  if (sum !== messages * 2) throw new Error("lost messages");
  return (messages / elapsed) * 1000;
}

/**
 * The bare loop over an array of the same deliveries: decode, (reply,) ack. It pulls 256 at a time
 * (untimed), as the app does, so the broker holds as few deliveries in flight as under the app; only
 * the loops over those arrays are timed.
 */
async function bareLoop(reply: boolean): Promise<number> {
  const broker = await filledBroker("orders");
  const connected = await broker.connect();
  const subscription = await connected.subscribe(
    new MemoryTopic("orders", { group: "bench", start: "start" }),
  );
  const publisher: MemoryPublisher = await connected.defaultPublishPolicy().pair(connected);
  let sum = 0;
  let acks = 0;
  let elapsed = 0;
  let seen = 0;
  while (seen < messages) {
    const deliveries: readonly Delivery[] = await subscription.nextBatch(256);
    seen += deliveries.length;
    const began = performance.now();
    let last: Promise<unknown> | undefined;
    for (const delivery of deliveries) {
      const order = json.decode(delivery.payload) as Order;
      sum += order.qty;
      if (reply) {
        last = publisher.publish({ name: "receipts", payload: json.encode({ orderId: order.id }) });
        last.then(() => delivery.ack());
      } else if (delivery.ack() === "ok") {
        acks++;
      }
    }
    if (last !== undefined) await last;
    elapsed += performance.now() - began;
  }
  await connected.shutdown();
  if (sum !== messages * 2 || (!reply && acks !== messages)) throw new Error("lost messages");
  return (messages / elapsed) * 1000;
}

interface Row {
  readonly name: string;
  readonly run: () => Promise<number>;
  readonly rates: number[];
}

const rows: Row[] = [
  { name: "full app, ack", run: () => fullApp(false), rates: [] },
  { name: "bare loop, ack", run: () => bareLoop(false), rates: [] },
  { name: "full app, reply", run: () => fullApp(true), rates: [] },
  { name: "bare loop, reply", run: () => bareLoop(true), rates: [] },
];

const fmt = (rate: number) => `${(rate / 1e6).toFixed(3)} M/s`;

// One untimed round so the JIT has seen every path.
for (const row of rows) await row.run();
for (let round = 0; round < rounds; round++) {
  for (const row of rows) row.rates.push(await row.run());
  process.stderr.write(`round ${round + 1}/${rounds} done\n`);
}

const summary = rows.map((row) => summarize(row.name, row.rates));

console.log(`in-process dispatch, ${messages} messages per round, ${rounds} interleaved rounds`);
for (const line of tableLines(summary, fmt)) console.log(line);
const ratio = (full: string, bare: string) =>
  summary.find((r) => r.name === full)!.median / summary.find((r) => r.name === bare)!.median;
const ratios = {
  ack: ratio("full app, ack", "bare loop, ack"),
  reply: ratio("full app, reply", "bare loop, reply"),
};
console.log(
  `ratio full/bare (medians): ack ${(ratios.ack * 100).toFixed(0)}%, reply ${(ratios.reply * 100).toFixed(0)}% (target 50%, on the way to 70%)`,
);

const result = {
  scenario:
    "in-process dispatch: full app on the memory broker vs a bare loop over the same deliveries",
  command: `pnpm --filter @ruststream/tooling-bench bench ${messages} ${rounds}`,
  date: new Date().toISOString(),
  machine: machine(),
  messagesPerRound: messages,
  rounds,
  rows: summary,
  ratios,
};
const file = new URL("../results/in-process.json", import.meta.url);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
console.log(`results written to tooling/bench/results/in-process.json`);
