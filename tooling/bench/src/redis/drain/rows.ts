// The drain rows: each takes a stream the generator pre-filled with `count` JSON orders and a group
// created at its start, decodes every entry into an order, and acknowledges it. Timed from the
// first order in hand to the last acknowledgement answered by the server.
import { execFile } from "node:child_process";
import { json, RustStream } from "@ruststream/core";
import type * as RedisPackage from "@ruststream/redis";
import { drainWithApp } from "../../rows/appDrain.js";
import { recordingPeak } from "../../rows/programPeak.js";
import type { Apart } from "../../rows/rowProcess.js";
import { openRaw, serverTarget } from "../target.js";
import { type Order, orderSchema } from "./order.js";

/** Entries per XREADGROUP in every row: the package's default `count`, and RustStream's. */
export const readCount = 64;

/** One row's run over one fresh key holding `count` orders, its group created at `0`. */
export interface DrainTrial {
  readonly url: string;
  readonly key: string;
  readonly group: string;
  readonly count: number;
}

export interface Drained {
  /** From the first order in hand to the last acknowledgement answered. */
  readonly ms: number;
  readonly messages: number;
  /** The sum of the ids decoded: checked against 0 + 1 + ... + (count - 1). */
  readonly idSum: bigint;
  /** The consumer process's CPU time over the same span (user + system, every thread). */
  readonly cpuMs: number;
}

function cpuMsNow(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export type DrainRow = (trial: DrainTrial) => Promise<Drained>;

/** `@ruststream/redis` as this tree has it, or as an earlier commit had it (against.ts). */
export type RedisModule = typeof RedisPackage;

/** Counts the orders a row decoded; resolves `done` at the last one. */
class DrainTally {
  readonly count: number;
  readonly done: Promise<void>;
  began = 0;
  cpuAtStart = 0;
  seen = 0;
  // A number: the ids of a few million orders sum to well under 2^53.
  idSum = 0;
  #finish!: () => void;

  constructor(count: number) {
    this.count = count;
    this.done = new Promise((resolve) => {
      this.#finish = resolve;
    });
  }

  /** Every row's whole "handler": note the order's id. */
  add(order: Order): void {
    if (this.seen === 0) {
      this.began = performance.now();
      this.cpuAtStart = cpuMsNow();
    }
    this.idSum += order.id;
    if (++this.seen === this.count) this.#finish();
  }

  /** Measured up to now: call once the last acknowledgement was answered. */
  drained(): Drained {
    return {
      ms: performance.now() - this.began,
      messages: this.seen,
      idSum: BigInt(this.idSum),
      cpuMs: cpuMsNow() - this.cpuAtStart,
    };
  }
}

function streamOf(redis: RedisModule, trial: DrainTrial): RedisPackage.RedisStream {
  return new redis.RedisStream(trial.key, {
    group: trial.group,
    start: "beginning",
    count: readCount,
  });
}

/**
 * The raw loop a careful ioredis user writes: XREADGROUP COUNT 64 on its own connection,
 * `JSON.parse` of each payload, then one `XACK` of the read's ids on the main connection, sent
 * without waiting so reading and acknowledging overlap; at most two reads' acks unanswered.
 */
export const rawDrain: DrainRow = async (trial) => {
  const reader = await openRaw(serverTarget(trial.url), "reader");
  const main = await openRaw(serverTarget(trial.url), "main");
  const { key, group } = trial;
  const tally = new DrainTally(trial.count);
  let previous: Promise<unknown> = Promise.resolve();
  while (tally.seen < trial.count) {
    const reply = (await reader.callBuffer(
      "XREADGROUP",
      "GROUP",
      group,
      "raw",
      "COUNT",
      readCount,
      "BLOCK",
      2000,
      "STREAMS",
      key,
      ">",
    )) as [[Buffer, [Buffer, Buffer[]][]]] | null;
    if (reply === null) throw new Error(`raw drain: nothing to read after ${tally.seen}`);
    const entries = reply[0][1];
    const ids: Buffer[] = new Array(entries.length);
    for (let i = 0; i < entries.length; i++) {
      const [id, fields] = entries[i]!;
      // The generator writes `_payload` alone.
      tally.add(JSON.parse(fields[1]!.toString("utf8")) as Order);
      ids[i] = id;
    }
    await previous;
    previous = main.callBuffer("XACK", key, group, ...ids);
  }
  await previous;
  const drained = tally.drained();
  reader.disconnect();
  main.disconnect();
  return drained;
};

/**
 * The broker alone, no runtime: pull batches of 64, decode each payload with core's JSON codec (the
 * app's), `ack()` each delivery without waiting; at most two batches' acks unanswered.
 */
export const brokerDrain =
  (redis: RedisModule): DrainRow =>
  async (trial) => {
    const connected = await new redis.RedisBroker({ url: trial.url, group: trial.group }).connect();
    const subscription = (await connected.subscribe(
      streamOf(redis, trial),
    )) as RedisPackage.RedisStreamSubscription;
    const tally = new DrainTally(trial.count);
    let previous: Promise<unknown> = Promise.resolve();
    while (tally.seen < trial.count) {
      const batch = await subscription.nextBatch(readCount);
      const acks: unknown[] = [];
      for (const delivery of batch) {
        tally.add(json.decode(delivery.payload) as Order);
        acks.push(delivery.ack());
      }
      await previous;
      previous = Promise.all(acks);
    }
    await previous;
    const drained = tally.drained();
    await connected.shutdown();
    return drained;
  };

/**
 * The full app: a RustStream app on the Redis broker whose subscriber is typed `Order` and decoded
 * by the default JSON codec (no schema), or validated by `orderSchema` as well; the handler only
 * notes the order, the runtime acks. `configure` adds to the app before it starts what a row
 * measures (tracing, in the operations bench's drains).
 */
export function appDrain(
  redis: RedisModule,
  withSchema: boolean,
  configure?: (app: RustStream) => void,
): DrainRow {
  return async (trial) => {
    const tally = new DrainTally(trial.count);
    const app = new RustStream({ name: trial.group, version: "0" }).broker(
      new redis.RedisBroker({ url: trial.url }),
      (b) => {
        const handler = (order: Order) => {
          tally.add(order);
        };
        const source = streamOf(redis, trial);
        if (withSchema) b.subscriber(source, { schema: orderSchema }).handle(handler);
        else b.subscriber<Order>(source).handle(handler);
      },
    );
    configure?.(app);
    return drainWithApp(app, tally);
  };
}

/**
 * RustStream's own consumer, in its own process: `bench-redis-drain` (tooling/interop), a
 * RustStream app on ruststream-fred with the handler mounted `.pipeline()` (or without the window,
 * `plain`), serde decoding each order into a struct. It times itself the same way; its peak
 * resident set is recorded as it exits (../../rows/programPeak.ts). `program` is the release
 * build of tooling/interop (rustProgram.ts).
 */
export function rustDrain(
  program: string,
  plain: boolean,
): (trial: DrainTrial) => Promise<Apart<Drained>> {
  return (trial) =>
    new Promise((resolve, reject) => {
      const args = ["bench-redis-drain", trial.url, trial.key, trial.group, String(trial.count)];
      if (plain) args.push("--plain");
      const recorded = recordingPeak(program, args);
      execFile(
        recorded.command,
        recorded.args,
        { encoding: "utf8", timeout: 600_000 },
        (error, stdout, stderr) => {
          if (error !== null) {
            reject(new Error(`bench-redis-drain failed: ${error.message}\n${stderr}`));
            return;
          }
          const line = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
            messages: number;
            seconds: number;
            cpu_seconds: number;
            id_sum: string;
          };
          resolve({
            measured: {
              ms: line.seconds * 1000,
              messages: line.messages,
              idSum: BigInt(line.id_sum),
              cpuMs: line.cpu_seconds * 1000,
            },
            memory: { maxRssKiB: recorded.peakKiB() },
          });
        },
      );
    });
}
