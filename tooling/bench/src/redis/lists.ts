// Reliable lists: values moved from the queue into a processing list, LREM from it once handled.
import { RedisBroker, RedisList, type RedisListSubscription } from "@ruststream/redis";
import { payloadOfFrame } from "./payload.js";
import { brokerOptions, openRaw } from "./target.js";
import { type Consumer, Tally, type Trial } from "./trial.js";

/** Acknowledgements any row leaves unanswered before it waits: the runtime's default prefetch. */
export const ackWindow = 256;

/** Values one pull moves in every row: the package's default `count`. */
const moveCount = 64;

export function listSource(trial: Trial): RedisList {
  return new RedisList(trial.key, { count: moveCount });
}

/**
 * The raw loop reads as the package does: up to 64 `LMOVE`s pipelined in one round trip on the main
 * connection, a `BLMOVE` on its own connection only when they found the queue empty; then one
 * `LREM` per value on the main connection without waiting for the answer, at most 256 unanswered.
 */
export const rawList: Consumer = async (trial) => {
  const reader = await openRaw(trial.target, "reader");
  const main = await openRaw(trial.target, "main");
  const processing = listSource(trial).keys(false).processing;
  const tally = new Tally(trial);
  let acks: Promise<unknown>[] = [];
  while (tally.received < trial.count) {
    const moves = main.pipeline();
    for (let i = 0; i < moveCount; i++) moves.lmoveBuffer(trial.key, processing, "RIGHT", "LEFT");
    const answers = (await moves.exec()) ?? [];
    let values = answers.map(([, value]) => value).filter((v): v is Buffer => Buffer.isBuffer(v));
    if (values.length === 0) {
      const value = (await reader.callBuffer(
        "BLMOVE",
        trial.key,
        processing,
        "RIGHT",
        "LEFT",
        "2",
      )) as Buffer | null;
      if (value === null) throw new Error(`raw list loop: nothing to move after ${tally.received}`);
      values = [value];
    }
    for (const value of values) {
      tally.add(payloadOfFrame(value).length);
      acks.push(main.lrem(processing, 1, value));
    }
    if (acks.length >= ackWindow) {
      await Promise.all(acks);
      acks = [];
    }
  }
  await Promise.all(acks);
  const measured = tally.measured();
  reader.disconnect();
  main.disconnect();
  return measured;
};

/** The broker alone: `nextBatch(64)`, `ack()` on each without waiting, the same window. */
export const brokerList: Consumer = async (trial) => {
  const connected = await new RedisBroker({
    ...brokerOptions(trial.target),
    group: trial.group,
  }).connect();
  const subscription = (await connected.subscribe(listSource(trial))) as RedisListSubscription;
  const tally = new Tally(trial);
  let acks: unknown[] = [];
  while (tally.received < trial.count) {
    const batch = await subscription.nextBatch(moveCount);
    if (batch.length === 0) throw new Error(`broker list: closed after ${tally.received}`);
    for (const delivery of batch) {
      tally.add(delivery.payload.length);
      acks.push(delivery.ack());
    }
    if (acks.length >= ackWindow) {
      await Promise.all(acks);
      acks = [];
    }
  }
  await Promise.all(acks);
  const measured = tally.measured();
  await connected.shutdown();
  return measured;
};
