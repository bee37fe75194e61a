// Pub/Sub: nothing to acknowledge; the rate is what the subscriber received while the generator
// published under credit (see README, "Pub/Sub: what is measured").
import { RedisBroker, RedisPubSub, type RedisPubSubSubscription } from "@ruststream/redis";
import { payloadOfFrame } from "./payload.js";
import { brokerOptions, openRaw } from "./target.js";
import { type Consumer, Tally, type Trial } from "./trial.js";

export function pubsubSource(trial: Trial): RedisPubSub {
  return new RedisPubSub(trial.key);
}

/** The raw loop: SUBSCRIBE and count in ioredis' `messageBuffer` listener. */
export const rawPubSub: Consumer = async (trial) => {
  const subscriber = await openRaw(trial.target, "subscriber");
  const tally = new Tally(trial);
  subscriber.on("messageBuffer", (_channel: Buffer, message: Buffer) => {
    tally.add(payloadOfFrame(message).length);
  });
  await subscriber.subscribe(trial.key);
  await Promise.all([trial.publish?.(), tally.done]);
  subscriber.disconnect();
  return { ms: tally.endedAt - tally.began, bytes: tally.bytes };
};

/** The broker alone: `next()` one delivery at a time (nothing to ack on a channel). */
export const brokerPubSub: Consumer = async (trial) => {
  const connected = await new RedisBroker({
    ...brokerOptions(trial.target),
    group: trial.group,
  }).connect();
  const subscription = (await connected.subscribe(pubsubSource(trial))) as RedisPubSubSubscription;
  const tally = new Tally(trial);
  const published = trial.publish?.();
  while (tally.received < trial.count) {
    const next = await subscription.next();
    if (next.done) throw new Error(`broker pub/sub: closed after ${tally.received}`);
    tally.add(next.value.payload.length);
  }
  await published;
  const dropped = subscription.dropped;
  await connected.shutdown();
  if (dropped > 0) throw new Error(`broker pub/sub: ${dropped} messages dropped`);
  return { ms: tally.endedAt - tally.began, bytes: tally.bytes };
};
