import { createRequire } from "node:module";
import { afterEach, describe, expect, it } from "vitest";
import { boundedGzipCodec, refusedBatchHeader } from "../src/client/kafkajs/boundedGzip.js";

// kafkajs's own batch encoder and decoder, with the bounded gzip codec in its registry as the
// package puts it there: a batch over the cap, or whose gzip is damaged, decodes to one record per
// record it declares, at its offsets, each marked refused; a batch under it decodes as it was.

const require = createRequire(import.meta.url);
const kafkajs = require("kafkajs") as {
  CompressionTypes: { GZIP: number };
  CompressionCodecs: Record<number, () => unknown>;
};
type Encoded = { buffer: Buffer };
const { RecordBatch } = require("kafkajs/src/protocol/recordBatch/v0") as {
  RecordBatch: (batch: object) => Promise<Encoded>;
};
const Record = require("kafkajs/src/protocol/recordBatch/record/v0") as (record: object) => Encoded;
const decodeBatch = require("kafkajs/src/protocol/recordBatch/v0/decoder") as (
  decoder: unknown,
) => Promise<{
  records: Array<{ offset: string; value: Buffer | null; headers: Record<string, Buffer> }>;
}>;
const Decoder = require("kafkajs/src/protocol/decoder") as new (buffer: Buffer) => unknown;

const original = kafkajs.CompressionCodecs[kafkajs.CompressionTypes.GZIP];
afterEach(() => {
  kafkajs.CompressionCodecs[kafkajs.CompressionTypes.GZIP] = original!;
});

function useCap(cap: number): void {
  const codec = boundedGzipCodec(cap);
  kafkajs.CompressionCodecs[kafkajs.CompressionTypes.GZIP] = () => codec;
}

/** A gzip batch of `values` at offsets 40.., as a fetch response carries it (bytes before it). */
async function batchOf(values: Buffer[], damage?: (batch: Buffer) => void): Promise<Buffer> {
  const records = values.map((value, i) =>
    Record({ offsetDelta: i, timestampDelta: 0, key: null, value, headers: {} }),
  );
  const batch = await RecordBatch({
    compression: kafkajs.CompressionTypes.GZIP,
    firstOffset: "40",
    lastOffsetDelta: values.length - 1,
    records,
  });
  const bytes = Buffer.from(batch.buffer);
  damage?.(bytes);
  // What came before the batch in the response: the batch sits inside one buffer, as kafkajs reads it.
  return Buffer.concat([Buffer.alloc(64, 7), bytes]).subarray(64);
}

async function decode(bytes: Buffer) {
  const { records } = await decodeBatch(new Decoder(bytes));
  return records.map((r) => ({
    offset: r.offset,
    value: r.value?.length ?? null,
    refused: r.headers[refusedBatchHeader]?.toString(),
  }));
}

describe("kafkajs's gzip, bounded", () => {
  it("a batch under the cap decodes as it was", async () => {
    useCap(1024 * 1024);
    const decoded = await decode(await batchOf([Buffer.alloc(10, 1), Buffer.alloc(20, 2)]));
    expect(decoded).toEqual([
      { offset: "40", value: 10, refused: undefined },
      { offset: "41", value: 20, refused: undefined },
    ]);
  });

  it("a batch inflating past the cap: one empty record per record, at its offsets, each marked", async () => {
    useCap(1024 * 1024);
    const decoded = await decode(
      await batchOf([Buffer.alloc(10, 1), Buffer.alloc(4 * 1024 * 1024), Buffer.alloc(10, 3)]),
    );
    const reason =
      "a gzip record batch of 3 records was refused: its gzip inflates past 1048576 bytes";
    expect(decoded).toEqual([
      { offset: "40", value: 0, refused: reason },
      { offset: "41", value: 0, refused: reason },
      { offset: "42", value: 0, refused: reason },
    ]);
  });

  it("a batch whose gzip is damaged: marked records too, never a failed fetch", async () => {
    useCap(1024 * 1024);
    const decoded = await decode(
      // The gzip starts after the batch's 61 bytes of header: damage its magic number.
      await batchOf([Buffer.alloc(10, 1), Buffer.alloc(10, 2)], (b) => b.fill(0, 61, 63)),
    );
    expect(decoded.map((r) => r.offset)).toEqual(["40", "41"]);
    expect(decoded[0]!.refused).toMatch(/was refused: its gzip cannot be inflated/);
  });

  it("a refused batch whose header cannot be read stands nothing in: the fetch fails, naming why", async () => {
    const codec = boundedGzipCodec(16);
    // A copy of the bytes, with no batch header before them.
    await expect(codec.decompress(Buffer.alloc(20, 9))).rejects.toThrow(
      /no records can stand in its place/,
    );
  });
});
