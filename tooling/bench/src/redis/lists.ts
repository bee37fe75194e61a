// Reliable lists: BLMOVE from the queue into a processing list, LREM from it once handled.
import { RedisBroker, RedisList } from "@ruststream/redis";
import { payloadOfFrame } from "./payload.js";
import { openRaw } from "./rawClient.js";
import { type Consumer, Tally, type Trial } from "./trial.js";

/** Acknowledgements any row leaves unanswered before it waits: the runtime's default prefetch. */
export const ackWindow = 256;

export function listSource(trial: Trial): RedisList {
  return new RedisList(trial.key);
}

/**
 * The raw loop: one BLMOVE per message on its own connection (the reliable-list pattern moves one
 * value at a time, as the package does), then LREM from the processing list on the main connection
 * without waiting for the answer, so the next move is already on its way. Acks are single commands
 * sent as they come; ioredis writes them while the socket is busy, so they leave in bursts anyway.
 */
export const rawList: Consumer = async (trial) => {
  const reader = await openRaw(trial.url, "reader");
  const main = await openRaw(trial.url, "main");
  const processing = listSource(trial).processing;
  const tally = new Tally(trial);
  let acks: Promise<unknown>[] = [];
  while (tally.received < trial.count) {
    const value = (await reader.callBuffer(
      "BLMOVE",
      trial.key,
      processing,
      "RIGHT",
      "LEFT",
      "2",
    )) as Buffer | null;
    if (value === null) throw new Error(`raw list loop: nothing to move after ${tally.received}`);
    tally.add(payloadOfFrame(value).length);
    acks.push(main.lrem(processing, 1, value));
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

/** The broker alone: `next()` one delivery at a time, `ack()` without waiting, the same window. */
export const brokerList: Consumer = async (trial) => {
  const connected = await new RedisBroker({ url: trial.url, group: trial.group }).connect();
  const subscription = await connected.subscribe(listSource(trial));
  const tally = new Tally(trial);
  let acks: unknown[] = [];
  while (tally.received < trial.count) {
    const next = await subscription.next();
    if (next.done) throw new Error(`broker list: closed after ${tally.received}`);
    tally.add(next.value.payload.length);
    acks.push(next.value.ack());
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
