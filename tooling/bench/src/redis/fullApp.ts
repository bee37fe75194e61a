// The full app: a RustStream app on the Redis broker whose handler does nothing but note the
// payload; decoding (the bytes codec), dispatch and the ack are the runtime's.
import { bytes, RustStream } from "@ruststream/core";
import { RedisBroker, type RedisSource } from "@ruststream/redis";
import { brokerOptions } from "./target.js";
import { type Consumer, Tally, type Trial } from "./trial.js";

/** A full-app row reading what `source` describes for the trial (stream, list or channel). */
export function fullApp(source: (trial: Trial) => RedisSource): Consumer {
  return async (trial) => {
    const tally = new Tally(trial);
    // No group option: the broker takes the app's name, as a real service's replicas would share it.
    const app = new RustStream({ name: trial.group, version: "0" }).broker(
      new RedisBroker(brokerOptions(trial.target)),
      (b) => {
        b.subscriber(source(trial), { codec: bytes }).handle((payload) => {
          tally.add(payload.length);
        });
      },
    );
    const running = await app.start();
    const published = trial.publish?.();
    await tally.done;
    // Every ack the runtime sent has been answered.
    await running.whenIdle();
    await published;
    const measured =
      trial.publish === undefined
        ? tally.measured()
        : { ms: tally.endedAt - tally.began, bytes: tally.bytes };
    await running.stop();
    return measured;
  };
}
