// Batches in each codec, written by our producer and read by our consumer; the broker's admin API
// (Java's codecs) decompresses the same entries, which checks our compressed bytes against Java's.

import { bytes, text } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type Compression, PulsarClient } from "../src/wire/index.js";
import { admin, serviceUrl } from "./env.js";
import { receiveOrNothing } from "./receiveOrNothing.js";
import { wireTopic } from "./wireTopic.js";

let client: PulsarClient;
afterEach(async () => {
  await client?.close();
});

describe.each([
  "NONE",
  "LZ4",
  "ZLIB",
  "ZSTD",
  "SNAPPY",
] as const)("batches compressed with %s", (compression: Compression) => {
  it("arrive whole: every message, its index in the batch, its key and properties", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const { topic, consumer, producer } = await wireTopic(
      client,
      `batch-${compression.toLowerCase()}`,
      {
        consumer: { receiverQueueSize: 7 },
        producer: { compression, batching: { maxMessages: 10, maxDelayMs: 50 } },
      },
    );
    const payloads = Array.from(
      { length: 25 },
      (_, i) => `message ${i} ${"abcdefgh".repeat(i * 10)}`,
    );
    const ids = await Promise.all(
      payloads.map((p, i) =>
        producer.send({ payload: bytes(p), key: `k${i}`, properties: { n: String(i) } }),
      ),
    );
    // 25 messages in batches of at most 10: three entries, indexes counting within each.
    expect(ids.slice(0, 10).map((id) => id.batchIndex)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(ids[0]!.batchSize).toBe(10);
    expect(new Set(ids.map((id) => `${id.ledgerId}:${id.entryId}`)).size).toBe(3);

    for (let i = 0; i < 25; i++) {
      const m = await consumer.receive({ timeoutMs: 10_000 });
      expect(text(m.payload)).toBe(payloads[i]);
      expect(m.key).toBe(`k${i}`);
      expect(m.properties.get("n")).toBe(String(i));
      expect(m.messageId.equals(ids[i]!)).toBe(true);
      expect(m.sequenceId).toBe(BigInt(i));
      consumer.ack(m);
    }

    // The broker reads the first entry back through Java's codec: compression recorded, bytes whole.
    const response = await admin(
      `/admin/v2/persistent/public/default/${topic}/ledger/${ids[0]!.ledgerId}/entry/${ids[0]!.entryId}`,
    );
    expect(response.headers.get("x-pulsar-compression")).toBe(
      compression === "NONE" ? null : compression,
    );
    expect(response.headers.get("x-pulsar-num-batch-message")).toBe("10");
    const body = Buffer.from(await response.arrayBuffer());
    if (compression !== "NONE")
      expect(body.length).toBe(Number(response.headers.get("x-pulsar-uncompressed-size")));
    for (const p of payloads.slice(0, 10)) expect(body.includes(Buffer.from(p))).toBe(true);
  });
});

describe("batch acknowledgement", () => {
  it("a nacked message of a partly acked batch comes back alone (acked indexes are not redelivered)", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const { consumer, producer } = await wireTopic(client, "batch-nack", {
      consumer: { subscriptionType: "Shared" },
      producer: { batching: { maxMessages: 4, maxDelayMs: 50 } },
    });
    await Promise.all(["a", "b", "c", "d"].map((p) => producer.send({ payload: bytes(p) })));
    const got = [];
    for (let i = 0; i < 4; i++) got.push(await consumer.receive({ timeoutMs: 5000 }));
    consumer.ack(got[0]!);
    consumer.ack(got[1]!);
    consumer.ack(got[3]!);
    consumer.nack(got[2]!);
    const again = await consumer.receive({ timeoutMs: 10_000 });
    expect(text(again.payload)).toBe("c");
    expect(again.redeliveryCount).toBe(1);
    consumer.ack(again);
    expect(await receiveOrNothing(consumer, 1000)).toBeUndefined();
  });
});

describe("a batch of plain and keyed messages", () => {
  it("carries each message's key, properties and event time, written in place or by the codec", async () => {
    client = new PulsarClient({ serviceUrl: serviceUrl() });
    const { consumer, producer } = await wireTopic(client, "batch-mixed", {
      producer: { batching: { maxMessages: 6, maxDelayMs: 50 } },
    });
    // Plain messages are written straight into the frame, the others through the codec: both kinds
    // interleaved in one entry.
    const sent = [
      { payload: bytes("plain 0") },
      { payload: bytes("keyed 1"), key: "k1" },
      { payload: bytes("plain 2") },
      { payload: bytes("props 3"), properties: { n: "3" } },
      { payload: bytes("timed 4"), eventTime: 1_700_000_000_004 },
      { payload: new Uint8Array(0) },
    ];
    const ids = await Promise.all(sent.map((m) => producer.send(m)));
    expect(new Set(ids.map((id) => `${id.ledgerId}:${id.entryId}`)).size).toBe(1);
    expect(ids.map((id) => id.batchIndex)).toEqual([0, 1, 2, 3, 4, 5]);
    for (const [i, m] of sent.entries()) {
      const got = await consumer.receive({ timeoutMs: 5000 });
      expect(Buffer.from(got.payload)).toEqual(Buffer.from(m.payload));
      expect(got.key).toBe(m.key);
      expect(Object.fromEntries(got.properties)).toEqual(m.properties ?? {});
      expect(got.eventTime).toBe(m.eventTime);
      expect(got.messageId.equals(ids[i]!)).toBe(true);
      // A new producer numbers its messages from 0.
      expect(got.sequenceId).toBe(BigInt(i));
      consumer.ack(got);
    }
  });
});
