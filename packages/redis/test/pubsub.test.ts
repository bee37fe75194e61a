import { HeaderMap } from "@ruststream/core";
import { bytes, requireEnv, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { decodeFrame, encodeFrame } from "../src/client/frame.js";
import {
  RedisBroker,
  RedisPubSub,
  RedisPubSubPattern,
  type RedisPubSubSubscription,
} from "../src/index.js";

const url = () => requireEnv("REDIS_URL");
const publisher = new Redis(url(), { protocol: 2 });
afterAll(() => publisher.disconnect());

async function subscribe(channel: string, pattern = false) {
  const connected = await new RedisBroker({ url: url() }).connect();
  const subscription = (await connected.subscribe(
    pattern ? new RedisPubSubPattern(channel) : new RedisPubSub(channel),
  )) as RedisPubSubSubscription;
  return { connected, subscription };
}

/** Publishes frames in one pipeline. */
async function publishAll(channel: string, frames: readonly Buffer[]): Promise<void> {
  const pipeline = publisher.pipeline();
  for (const frame of frames) pipeline.publish(channel, frame);
  await pipeline.exec();
}

const plain = (payload: string) => encodeFrame(new HeaderMap(), bytes(payload));

describe("pub/sub batches", () => {
  it("hands out what arrived in batches of at most max, in order, with and without headers", async () => {
    const channel = uniqueName("batch");
    const { connected, subscription } = await subscribe(channel);
    try {
      const frames = Array.from({ length: 100 }, (_, i) =>
        i % 10 === 0
          ? encodeFrame(new HeaderMap().set("h", bytes(`v${i}`)), bytes(`m${i}`))
          : plain(`m${i}`),
      );
      await publishAll(channel, frames);
      const got = [];
      let largest = 0;
      while (got.length < 100) {
        const batch = await subscription.nextBatch(32);
        expect(batch.length).toBeGreaterThan(0);
        expect(batch.length).toBeLessThanOrEqual(32);
        largest = Math.max(largest, batch.length);
        got.push(...batch);
      }
      // Published in one pipeline: they arrive faster than one at a time.
      expect(largest).toBeGreaterThan(1);
      expect(got.map((d) => text(d.payload))).toEqual(frames.map((_, i) => `m${i}`));
      for (const [i, d] of got.entries()) {
        expect(d.headers.getString("h")).toBe(i % 10 === 0 ? `v${i}` : undefined);
        expect(d.position.sequence).toBe(BigInt(i + 1));
      }
    } finally {
      await connected.shutdown();
    }
  });

  it("wakes a waiting nextBatch with every message of the read that woke it", async () => {
    const channel = uniqueName("wake");
    const { connected, subscription } = await subscribe(channel);
    try {
      // Waiting from the call on: the subscription is confirmed and nothing has arrived.
      const waiting = subscription.nextBatch(100);
      await publishAll(
        channel,
        Array.from({ length: 20 }, (_, i) => plain(`w${i}`)),
      );
      const first = await waiting;
      expect(text(first[0]!.payload)).toBe("w0");
      const rest = [...first];
      while (rest.length < 20) rest.push(...(await subscription.nextBatch(100)));
      expect(rest.map((d) => text(d.payload))).toEqual(
        Array.from({ length: 20 }, (_, i) => `w${i}`),
      );
    } finally {
      await connected.shutdown();
    }
  });

  it("resolves a waiting nextBatch with nothing when the subscription closes", async () => {
    const channel = uniqueName("close");
    const { connected, subscription } = await subscribe(channel);
    const waiting = subscription.nextBatch(10);
    await subscription.close();
    expect(await waiting).toEqual([]);
    expect(await subscription.next()).toEqual({ done: true, value: undefined });
    await connected.shutdown();
  });

  it("keeps the newest 10 000 of a subscriber that fell behind, and counts the rest dropped", async () => {
    const channel = uniqueName("behind");
    const { connected, subscription } = await subscribe(channel);
    try {
      const total = 20_050;
      // Raw payloads (no frame) arrive as they are: a tool's PUBLISH is a message too.
      for (let from = 0; from < total; from += 5000) {
        const pipeline = publisher.pipeline();
        for (let i = from; i < Math.min(total, from + 5000); i++)
          pipeline.publish(channel, `d${i}`);
        await pipeline.exec();
      }
      for (let i = 0; i < 100 && subscription.dropped < total - 10_000; i++) await sleep(50);
      expect(subscription.dropped).toBe(total - 10_000);
      const kept = await subscription.nextBatch(50_000);
      expect(kept.length).toBe(10_000);
      expect(text(kept[0]!.payload)).toBe(`d${total - 10_000}`);
      expect(text(kept.at(-1)!.payload)).toBe(`d${total - 1}`);
      // Drained: the next message is the next one published.
      await publisher.publish(channel, "after");
      expect(text((await subscription.nextBatch(10))[0]!.payload)).toBe("after");
    } finally {
      await connected.shutdown();
    }
  });
});

describe("channel names", () => {
  it("names each message's own channel under a pattern, however the names alternate", async () => {
    const prefix = uniqueName("pattern");
    const { connected, subscription } = await subscribe(`${prefix}.*`, true);
    try {
      const channels = ["a", "b", "a", "a", "bb", "é", "b", "a"].map((c) => `${prefix}.${c}`);
      const pipeline = publisher.pipeline();
      for (const [i, channel] of channels.entries()) pipeline.publish(channel, plain(`p${i}`));
      await pipeline.exec();
      const got = [];
      while (got.length < channels.length) got.push(...(await subscription.nextBatch(100)));
      expect(got.map((d) => d.name)).toEqual(channels);
      expect(got.map((d) => text(d.payload))).toEqual(channels.map((_, i) => `p${i}`));
    } finally {
      await connected.shutdown();
    }
  });
});

describe("frames", () => {
  it("decodes a frame without headers to the payload after the count", () => {
    const framed = decodeFrame(plain("body"));
    expect(framed.headers.size).toBe(0);
    expect(text(framed.payload)).toBe("body");
    expect(decodeFrame(Buffer.alloc(4)).payload.length).toBe(0);
  });

  it("decodes headers, and takes what is not a frame as a raw payload", () => {
    const framed = decodeFrame(encodeFrame(new HeaderMap().set("a", bytes("1")), bytes("p")));
    expect(framed.headers.getString("a")).toBe("1");
    expect(text(framed.payload)).toBe("p");
    expect(text(decodeFrame(bytes("abc")).payload)).toBe("abc");
    expect(text(decodeFrame(bytes("not a frame")).payload)).toBe("not a frame");
  });
});
