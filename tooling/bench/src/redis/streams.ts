// Streams with a consumer group, each entry acknowledged on its own (one XACK per entry).
import { RedisBroker, RedisStream, type RedisStreamSubscription } from "@ruststream/redis";
import { brokerOptions, openRaw } from "./target.js";
import { type Consumer, Tally, type Trial } from "./trial.js";

/** Entries per XREADGROUP in every row: the package's default `count`. */
export const readCount = 64;

type Entry = [id: Buffer, fields: Buffer[]];
type ReadReply = [[key: Buffer, entries: Entry[]]] | null;

/** What every stream row reads: the group starts at 0, so it takes the whole pre-filled stream. */
export function streamSource(trial: Trial): RedisStream {
  return new RedisStream(trial.key, { group: trial.group, start: "beginning", count: readCount });
}

/**
 * The raw loop a careful ioredis user writes: XREADGROUP COUNT 64 on its own connection (as the
 * package reads), then one XACK per entry, the acks of a read sent as one pipeline on the main
 * connection without waiting, so reading and acknowledging overlap. At most two reads' acks are
 * unanswered at a time, as the runtime bounds what it leaves unsettled.
 */
export const rawStream: Consumer = async (trial) => {
  const reader = await openRaw(trial.target, "reader");
  const main = await openRaw(trial.target, "main");
  const { key, group } = trial;
  await main.xgroup("CREATE", key, group, "0", "MKSTREAM");
  const tally = new Tally(trial);
  let previous: Promise<unknown> = Promise.resolve();
  while (tally.received < trial.count) {
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
    )) as ReadReply;
    if (reply === null) throw new Error(`raw stream loop: nothing to read after ${tally.received}`);
    const acks = main.pipeline();
    for (const [id, fields] of reply[0][1]) {
      // The generator writes `_payload` first, as the package does.
      tally.add(fields[1]!.length);
      acks.xack(key, group, id);
    }
    await previous;
    previous = acks.exec();
  }
  await previous;
  const measured = tally.measured();
  reader.disconnect();
  main.disconnect();
  return measured;
};

/**
 * The broker alone: subscribe, pull batches of 64, `ack()` each delivery without waiting on it; at
 * most two batches' acks unanswered at a time, as in the raw loop.
 */
export const brokerStream: Consumer = async (trial) => {
  const connected = await new RedisBroker({
    ...brokerOptions(trial.target),
    group: trial.group,
  }).connect();
  // A stream descriptor opens a stream subscription, the one kind that batches.
  const subscription = (await connected.subscribe(streamSource(trial))) as RedisStreamSubscription;
  const tally = new Tally(trial);
  let previous: Promise<unknown> = Promise.resolve();
  while (tally.received < trial.count) {
    const batch = await subscription.nextBatch(readCount);
    const acks = [];
    for (const delivery of batch) {
      tally.add(delivery.payload.length);
      acks.push(delivery.ack());
    }
    await previous;
    previous = Promise.all(acks);
  }
  await previous;
  const measured = tally.measured();
  await connected.shutdown();
  return measured;
};
