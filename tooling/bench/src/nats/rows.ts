// The NATS rows (bench:nats), each run in a process of its own (../rows/rowChild.ts):
//
// - core NATS: the raw loop a careful user writes (`nc.subscribe` with a callback, `m.json()`)
//   and the full app (a NatsSubject, its handler typed `Order`), each on a subject of its own
//   that generator.ts publishes to once the row's subscription is at the server (credit.ts);
// - JetStream: a stream main.ts filled, drained by the raw loops a careful user writes (a durable
//   pull consumer, `consumer.consume({ max_messages })`, `m.json()`, then `m.ack()` each, or, on a
//   consumer made with `ack_policy: all`, `m.ack()` of the latest message once a quarter of the
//   pull is unacked and at the end of the event loop's turn: each such ack settles every earlier
//   message too) and by the full app (a JetStreamSubject on the stream with a durable consumer, the
//   same pull size, its handler typed `Order`, acked by the runtime).
//
// Every row is timed from the first order in hand to the last one handled (and, where it acks,
// acked: the app to `whenIdle()`, the raw JetStream loop to its acks flushed).

import { AckPolicy, type JsMsg, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { RustStream } from "@ruststream/core";
import { JetStreamSubject, NatsBroker, NatsSubject } from "@ruststream/nats";
import { type Drained, Tally } from "../kafka/tally.js";
import { type AckStrategy, ackEach, ackMultiple } from "../rabbitmq/rawAcks.js";
import type { Order } from "../redis/drain/order.js";
import { drainWithApp } from "../rows/appDrain.js";
import { Credit, creditSubject, type FillRequest, fillSubject } from "./credit.js";

/** One row's run: a core subject the generator fills, or a filled stream. */
export type NatsTrial =
  | {
      readonly kind: "core";
      readonly url: string;
      readonly monitorUrl: string;
      readonly subject: string;
      readonly count: number;
    }
  | {
      readonly kind: "jetstream";
      readonly url: string;
      readonly stream: string;
      readonly subject: string;
      readonly durable: string;
      readonly count: number;
    };
type CoreTrial = Extract<NatsTrial, { kind: "core" }>;
type StreamTrial = Extract<NatsTrial, { kind: "jetstream" }>;

/**
 * Messages one pull asks for in both JetStream rows: the package's `fetchSize` default, which is
 * also what the runtime pulls at once (256); the client's own default is 100.
 */
export const pullSize = 256;

/** How long a core row may take before it fails (an order lost would leave it waiting). */
const coreLimitMs = 120_000;

/**
 * Waits until the server has a subscription on the trial's subject (its monitoring port), then
 * asks the generator to fill it: a row's subscription reaches the server asynchronously, and what
 * the server sees before it is lost to the row.
 */
async function fillOnceListening(control: NatsConnection, trial: CoreTrial): Promise<void> {
  for (;;) {
    const response = await fetch(`${trial.monitorUrl}/connz?subs=1`);
    const connz = (await response.json()) as {
      connections?: { subscriptions_list?: string[] }[];
    };
    if (connz.connections?.some((c) => c.subscriptions_list?.includes(trial.subject))) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const request: FillRequest = { subject: trial.subject, count: trial.count };
  await control.request(fillSubject, JSON.stringify(request), { timeout: 10_000 });
}

/** Runs a core row: `listen` subscribes with a handler that calls `handled`. */
async function coreRow(
  trial: CoreTrial,
  listen: (handled: (order: Order) => void) => Promise<() => Promise<void>>,
): Promise<Drained> {
  const control = await connect({ servers: trial.url, name: "bench-nats-control" });
  try {
    const credit = new Credit((n) => control.publish(creditSubject(trial.subject), String(n)));
    const tally = new Tally(trial.count);
    const stop = await listen((order) => {
      tally.add(order);
      credit.note();
    });
    await fillOnceListening(control, trial);
    const limit = setTimeout(() => {
      process.stderr.write(`core row: ${tally.seen} of ${trial.count} after ${coreLimitMs} ms\n`);
      process.exit(1);
    }, coreLimitMs);
    await tally.done;
    clearTimeout(limit);
    const drained = tally.drained();
    await stop();
    return drained;
  } finally {
    await control.close();
  }
}

const rawCore = (trial: CoreTrial) =>
  coreRow(trial, async (handled) => {
    const nc = await connect({ servers: trial.url, name: "bench-nats-raw" });
    nc.subscribe(trial.subject, {
      callback: (error, m) => {
        if (error === null) handled(m.json<Order>());
      },
    });
    return () => nc.close();
  });

const appCore = (trial: CoreTrial) =>
  coreRow(trial, async (handled) => {
    const app = new RustStream({ name: "bench-nats", version: "0" }).broker(
      new NatsBroker({ servers: trial.url }),
      (b) => {
        b.subscriber<Order>(new NatsSubject(trial.subject)).handle(handled);
      },
    );
    const running = await app.start();
    return async () => {
      await running.whenIdle();
      await running.stop();
    };
  });

/**
 * The raw JetStream loop: `policy` the consumer's ack policy, `acking` which messages it acks (each,
 * or under `ack_policy: all` the latest of a run, which settles the run).
 */
async function rawStream(
  trial: StreamTrial,
  policy: typeof AckPolicy.Explicit | typeof AckPolicy.All,
  acking: AckStrategy,
): Promise<Drained> {
  const nc = await connect({ servers: trial.url, name: "bench-nats-raw" });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.consumers.add(trial.stream, { durable_name: trial.durable, ack_policy: policy });
    const consumer = await jetstream(nc).consumers.get(trial.stream, trial.durable);
    const messages = await consumer.consume({ max_messages: pullSize });
    const tally = new Tally(trial.count);
    // Under either policy an ack is the message's own `+ACK`; `all` makes it cover earlier ones.
    const acks = acking<JsMsg>((m) => m.ack(), pullSize);
    for await (const m of messages) {
      tally.add(m.json<Order>());
      acks.handled(m);
      if (tally.seen === trial.count) break;
    }
    acks.flush();
    // The acks are written; the flush's answer follows them.
    await nc.flush();
    return tally.drained();
  } finally {
    await nc.close();
  }
}

async function appStream(trial: StreamTrial): Promise<Drained> {
  const tally = new Tally(trial.count);
  const app = new RustStream({ name: "bench-nats", version: "0" }).broker(
    new NatsBroker({ servers: trial.url }),
    (b) => {
      b.subscriber<Order>(
        new JetStreamSubject(trial.subject, {
          stream: trial.stream,
          durable: trial.durable,
          fetchSize: pullSize,
        }),
      ).handle((order) => {
        tally.add(order);
      });
    },
  );
  return drainWithApp(app, tally);
}

export const rowNames: Readonly<Record<string, string>> = {
  "raw-core": "core: raw nats.js subscribe",
  "app-core": "core: full app",
  "raw-js": `JetStream: raw consume(${pullSize}), ack each`,
  "raw-js-all": `JetStream: raw consume(${pullSize}), ack_policy all, acks batched`,
  "app-js": `JetStream: full app, fetchSize ${pullSize}`,
};

/** A row's printed name by its key. */
export function rowName(key: string): string {
  const name = rowNames[key];
  if (name === undefined) {
    throw new Error(`unknown row "${key}": ${Object.keys(rowNames).join(", ")}`);
  }
  return name;
}

/** The row module's entry (../rows/protocol.ts). */
export function runRow(key: string, trial: unknown): Promise<Drained> {
  switch (key) {
    case "raw-core":
      return rawCore(trial as CoreTrial);
    case "app-core":
      return appCore(trial as CoreTrial);
    case "raw-js":
      return rawStream(trial as StreamTrial, AckPolicy.Explicit, ackEach);
    case "raw-js-all":
      return rawStream(trial as StreamTrial, AckPolicy.All, ackMultiple);
    case "app-js":
      return appStream(trial as StreamTrial);
    default:
      throw new Error(`unknown row "${key}": ${Object.keys(rowNames).join(", ")}`);
  }
}
