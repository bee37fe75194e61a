// The in-process dispatch cost: the full app on the memory broker against a bare loop over an array of
// the same deliveries doing the same decode and settle. Rounds interleave the rows so drift in the
// machine (thermal, GC, other load) hits every row alike.
//
//   pnpm --filter @ruststream/tooling-bench bench [messages-per-round] [rounds]
import { writeFileSync } from "node:fs";
import * as core from "@ruststream/core";
import { type Delivery, json, type MemoryPublisher, MemoryTopic } from "@ruststream/core";
import { filledBroker, fullApp, orderPayloads } from "./inProcessApp.js";
import { machine, summarize, tableLines } from "./stats.js";

const messages = Number(process.argv[2] ?? 300_000);
const rounds = Number(process.argv[3] ?? 7);

interface Order {
  readonly id: number;
  readonly qty: number;
}

const payloads = orderPayloads(core, messages);
/**
 * The bare loop over an array of the same deliveries: decode, (reply,) ack. It pulls 256 at a time
 * (untimed), as the app does, so the broker holds as few deliveries in flight as under the app; only
 * the loops over those arrays are timed.
 */
async function bareLoop(reply: boolean): Promise<number> {
  const broker = await filledBroker(core, "orders", payloads);
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
  { name: "full app, ack", run: () => fullApp(core, payloads, false), rates: [] },
  { name: "bare loop, ack", run: () => bareLoop(false), rates: [] },
  { name: "full app, reply", run: () => fullApp(core, payloads, true), rates: [] },
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
