import { bytes, requireEnv, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  PulsarBroker,
  type PulsarDelivery,
  PulsarExclusive,
  PulsarPublish,
  PulsarShared,
  type PulsarSource,
} from "../src/index.js";
import { unloadTopic } from "./env.js";

// The topic unloaded through the admin API while messages flow: the broker closes our producer
// and consumers, which look the topic up again and come back; every publish is confirmed and
// every message is received (an unacked one may come twice, never not at all).
//
// How many may come twice, per unload (one close of the producer and one of the consumer):
// - Consumer: acks await no answer, so the broker may close the consumer before it applied the
//   last acks we sent, and it redelivers those messages to the next subscribe. What was queued and
//   not taken is dropped at the close (it comes again once), and an ack made while detached goes
//   out before the next FLOW, so only acks in flight at the close count. The broker pushes at most
//   the receiver queue plus the permits it has read back; we return permits for messages taken,
//   in the same write as (after) the ACK of every message taken by then, and this reader acks each
//   message in the turn it takes it. So what the broker pushed and has no ack for is at most the
//   receiver queue. Sends are unbatched here: the broker counts permits in messages but reads
//   entries by its estimate of their size, so with batches it may push more than the permits.
// - Producer: it resends every send still unconfirmed after the reconnect, and with deduplication
//   off the broker stores one again if it had written it but its receipt was lost with the
//   connection: at most the send window (this test waits for each window's receipts).
const queue = 20;
const window = 25;
const unloadsAt = [150, 300];
const duplicateBound = unloadsAt.length * (queue + window);

describe("a topic unloaded mid-stream", () => {
  for (const [kind, make] of [
    [
      "Shared",
      (topic: string) => new PulsarShared(topic, { subscription: "u", receiverQueueSize: queue }),
    ],
    [
      "Exclusive",
      (topic: string) =>
        new PulsarExclusive(topic, { subscription: "u", receiverQueueSize: queue }),
    ],
  ] as const) {
    it(`${kind}: every publish confirmed, every message handled, nothing lost`, async () => {
      const topic = uniqueName("unload");
      const connected = await new PulsarBroker({ url: requireEnv("PULSAR_URL") }).connect();
      try {
        const source: PulsarSource = make(topic);
        const sub = await connected.subscribe(source);
        const publisher = await new PulsarPublish({ batching: false }).pair(connected);
        const total = 400;
        const seen = new Set<string>();
        let duplicates = 0;
        const reading = (async () => {
          while (seen.size < total) {
            const batch: readonly PulsarDelivery[] = await sub.nextBatch(32);
            for (const d of batch) {
              const payload = text(d.payload);
              if (seen.has(payload)) duplicates++;
              seen.add(payload);
              await d.ack();
            }
          }
        })();
        const receipts: PromiseSettledResult<unknown>[] = [];
        for (let i = 0; i < total; i += window) {
          const sends: Promise<unknown>[] = [];
          for (let j = i; j < i + window; j++)
            sends.push(publisher.publish({ name: topic, payload: bytes(`m${j}`) }));
          // Unloaded while this window's sends are in flight.
          const unloading = unloadsAt.includes(i) ? unloadTopic(topic) : undefined;
          receipts.push(...(await Promise.allSettled(sends)));
          await unloading;
        }
        expect(receipts.length).toBe(total);
        expect(receipts.filter((r) => r.status === "rejected")).toEqual([]);
        await Promise.race([
          reading,
          sleep(30_000).then(() => {
            throw new Error(`only ${seen.size} of ${total} received after 30 s`);
          }),
        ]);
        expect(seen.size).toBe(total);
        // Acks in flight at a close, and sends whose receipts it took: see the bound at the top.
        expect(duplicates).toBeLessThanOrEqual(duplicateBound);
        await sub.close();
      } finally {
        await connected.shutdown();
      }
    }, 60_000);
  }
});
