// An entry larger than the consumer's limit, on the real broker (issue 40): the broker stores it
// under its own limit (5 MiB) and sends it as it is to a client that was told a smaller one (here
// 64 KiB, through test/narrowingProxy.ts). The consumer must read the frame's command, skip its
// bytes as they arrive, report the entry as undecodable with its position, and go on over the same
// connection. Before: the frame reader threw a FrameError on the frame's size, the connection
// dropped, the consumer subscribed again, the broker sent the same entry again, and so on for ever:
// one message stopped the subscription (the proxy counted a new connection every backoff).
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { PulsarClient } from "../src/wire/index.js";
import { capture } from "./captureLog.js";
import { eventually, serviceUrl, topicStats } from "./env.js";
import { type NarrowingProxy, narrowingProxy } from "./narrowingProxy.js";
import { RawProducer } from "./rawProducer.js";

const KiB = 1024;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function proxied(maxMessageSize: number): Promise<NarrowingProxy> {
  const proxy = await narrowingProxy(serviceUrl(), maxMessageSize);
  cleanups.push(() => proxy.close());
  return proxy;
}

describe("an entry over the consumer's max message size, between good ones", () => {
  it("is skipped unread, acked as undecodable with its position, on one connection, and every good message is handled", async () => {
    const topic = uniqueName("oversized");
    const proxy = await proxied(64 * KiB);
    const log = capture();
    const client = new PulsarClient({
      serviceUrl: proxy.url,
      logger: log.logger,
      backoff: { initialMs: 20, maxMs: 100 },
    });
    cleanups.push(() => client.close());
    const consumer = await client.subscribe({
      topic,
      subscription: "s",
      subscriptionType: "Exclusive",
    });
    // Published straight to the broker, whose limit is 5 MiB: 512 KiB is well within it, and
    // well over the 64 KiB + 40 KiB of headroom the consumer's connection reads.
    const publisher = new PulsarClient({ serviceUrl: serviceUrl() });
    cleanups.push(() => publisher.close());
    const raw = await RawProducer.create(publisher, topic);
    await raw.send({}, bytes("good 0"));
    const big = await raw.send(
      { properties: [{ key: "k", value: "v" }] },
      new Uint8Array(512 * KiB),
    );
    await raw.send({}, bytes("good 1"));
    await raw.send({}, bytes("good 2"));
    await raw.close();

    const handed: string[] = [];
    for (let i = 0; i < 3; i++) {
      const message = await consumer.receive({ timeoutMs: 10_000 }).catch((error: Error) => {
        throw new Error(
          `${error.message}; handed so far: ${handed.join(", ") || "none"}; connections through the proxy: ${proxy.accepted()}`,
        );
      });
      handed.push(text(message.payload));
      consumer.ack(message);
    }
    expect(handed).toEqual(["good 0", "good 1", "good 2"]);
    expect(log.errors()).toEqual([
      expect.objectContaining({
        fields: expect.objectContaining({
          topic: `persistent://public/default/${topic}`,
          subscription: "s",
          messageId: big.toString(),
          reason: "UncompressedSizeCorruption",
          error: expect.stringMatching(
            /^a frame of \d+ bytes exceeds the limit of 106496: its payload was skipped unread$/,
          ),
        }),
      }),
    ]);
    const partition = consumer.partitionConsumers[0]!;
    expect(partition.discarded).toBe(1);
    // One connection, one subscribe: nothing dropped it, nothing was fetched again.
    expect(client.connectionsOpened).toBe(1);
    expect(proxy.accepted()).toBe(1);
    expect(partition.connects).toBe(1);
    // Acked (with its validation error): the backlog empties, so it does not come back.
    await eventually(
      async () => (await topicStats(topic)).subscriptions.s?.msgBacklog === 0,
      10_000,
      "an empty backlog",
    );
  });
});
