// Seek by message id and by publish time: the broker disconnects the subscription's consumers to
// move the cursor; ours resubscribes and drops what was queued from before.

import { bytes, sleep, text } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type MessageId, PulsarClient } from "../src/wire/index.js";
import { serviceUrl } from "./env.js";
import { wireTopic } from "./wireTopic.js";

let client: PulsarClient;
afterEach(async () => {
  await client?.close();
});

async function setup(batching: boolean) {
  client = new PulsarClient({ serviceUrl: serviceUrl() });
  const { consumer, producer } = await wireTopic(client, "seek", {
    producer: { batching: batching ? { maxMessages: 3, maxDelayMs: 20 } : false },
  });
  const ids: MessageId[] = [];
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    times.push(Date.now());
    ids.push(await producer.send({ payload: bytes(String(i)) }));
    await sleep(5);
  }
  return { consumer, ids, times };
}

describe("seek", () => {
  it("by message id: the next message is that one, and queued messages from before are dropped", async () => {
    const { consumer, ids } = await setup(false);
    for (let i = 0; i < 8; i++) consumer.ack(await consumer.receive({ timeoutMs: 5000 }));
    // Messages 8 and 9 are queued here, not yet taken.
    await consumer.seek(ids[3]!);
    const after: string[] = [];
    for (let i = 0; i < 7; i++)
      after.push(text((await consumer.receive({ timeoutMs: 10_000 })).payload));
    expect(after).toEqual(["3", "4", "5", "6", "7", "8", "9"]);
    expect(consumer.partitionConsumers[0]!.connects).toBeGreaterThanOrEqual(2);
  });

  it("by publish time: the next message is the first published at or after it", async () => {
    const { consumer, times } = await setup(false);
    for (let i = 0; i < 10; i++) consumer.ack(await consumer.receive({ timeoutMs: 5000 }));
    const message5 = times[5]!;
    await consumer.seek(message5);
    const next = await consumer.receive({ timeoutMs: 10_000 });
    expect(text(next.payload)).toBe("5");
    expect(next.publishTime).toBeGreaterThanOrEqual(message5);
  });

  it("by time to the beginning replays batched messages", async () => {
    const { consumer } = await setup(true);
    for (let i = 0; i < 10; i++) consumer.ack(await consumer.receive({ timeoutMs: 5000 }));
    await consumer.seek(0);
    const replay: string[] = [];
    for (let i = 0; i < 10; i++)
      replay.push(text((await consumer.receive({ timeoutMs: 10_000 })).payload));
    expect(replay).toEqual(Array.from({ length: 10 }, (_, i) => String(i)));
  });
});
