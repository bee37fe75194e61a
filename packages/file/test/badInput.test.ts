import { isRustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import {
  decodeFile,
  decodeHeader,
  FileEncoder,
  type FileErrorCode,
  type FileHeader,
  fileErrorDetail,
  isSeaStreamerFile,
  StreamDecoder,
  type StreamMessage,
  validateStreamKey,
} from "../src/formatEntry.js";

const header: FileHeader = {
  fileName: "bad.ss",
  createdAt: 1_700_000_000_000,
  beaconInterval: 1024,
};
const ok: StreamMessage = {
  streamKey: "orders",
  shard: 0n,
  seq: 1n,
  timestamp: 1_700_000_000_001,
  payload: new TextEncoder().encode("hi"),
};

function codeOf(fn: () => unknown): FileErrorCode | undefined {
  try {
    fn();
  } catch (error) {
    const detail = fileErrorDetail(error);
    if (isRustStreamError(error) && detail) return detail.code;
    throw error;
  }
  return undefined;
}

describe("stream keys", () => {
  it.each([
    ["a", true],
    ["orders.v1_eu-west", true],
    ["x".repeat(249), true],
    ["x".repeat(250), false],
    ["", false],
    ["has space", false],
    ["slash/es", false],
    ["ünïcode", false],
    ["emoji🙂", false],
  ])("%j valid: %s", (key, valid) => {
    expect(codeOf(() => validateStreamKey(key))).toBe(valid ? undefined : "INVALID_STREAM_KEY");
  });

  it("names the offending character and the allowed set in the message", () => {
    expect(() => validateStreamKey("a b")).toThrow(/" ".*A-Z a-z 0-9 \. _ -/);
  });
});

describe("the encoder writes nothing on bad input", () => {
  const cases: [string, StreamMessage, FileErrorCode][] = [
    ["an invalid stream key", { ...ok, streamKey: "no spaces" }, "INVALID_STREAM_KEY"],
    [
      "a stream key over 249 characters",
      { ...ok, streamKey: "k".repeat(250) },
      "INVALID_STREAM_KEY",
    ],
    ["a payload over the limit", { ...ok, payload: new Uint8Array(65) }, "PAYLOAD_TOO_LARGE"],
    ["a negative sequence", { ...ok, seq: -1n }, "INVALID_ARGUMENT"],
    ["a sequence over u64", { ...ok, seq: 1n << 64n }, "INVALID_ARGUMENT"],
    ["a shard over u64", { ...ok, shard: 1n << 64n }, "INVALID_ARGUMENT"],
    ["a fractional timestamp", { ...ok, timestamp: 1.5 }, "INVALID_ARGUMENT"],
    ["a timestamp past year 9999", { ...ok, timestamp: 253_402_300_800_000 }, "INVALID_ARGUMENT"],
  ];

  it.each(cases)("rejects %s", (_, message, code) => {
    const { encoder } = FileEncoder.create(header, { maxMessageBytes: 64 });
    const first = encoder.write(ok);
    const offset = encoder.offset;
    const state = encoder.streams();
    expect(codeOf(() => encoder.write(message))).toBe(code);
    // The failed write left no trace: same offset, same state, and the next write is unchanged.
    expect(encoder.offset).toBe(offset);
    expect(encoder.streams()).toEqual(state);
    const fresh = FileEncoder.create(header, { maxMessageBytes: 64 }).encoder;
    fresh.write(ok);
    expect(encoder.write({ ...ok, seq: 2n })).toEqual(fresh.write({ ...ok, seq: 2n }));
    expect(first.length).toBeGreaterThan(0);
  });

  it("accepts a payload exactly at the limit", () => {
    const { encoder } = FileEncoder.create(header, { maxMessageBytes: 64 });
    expect(() => encoder.write({ ...ok, payload: new Uint8Array(64) })).not.toThrow();
  });

  it.each([
    ["a beacon interval under 128", { ...header, beaconInterval: 127 }],
    ["a fractional beacon interval", { ...header, beaconInterval: 1024.5 }],
    ["a file name over 111 bytes", { ...header, fileName: "n".repeat(112) }],
    ["a negative creation time", { ...header, createdAt: -1 }],
  ])("rejects a header with %s", (_, bad) => {
    expect(codeOf(() => FileEncoder.create(bad))).toBe("INVALID_ARGUMENT");
  });

  it("accepts the longest file name that fits", () => {
    const { bytes } = FileEncoder.create({ ...header, fileName: "n".repeat(111) });
    expect(bytes.length).toBe(128);
    expect(decodeHeader(bytes).fileName).toBe("n".repeat(111));
  });
});

describe("files that are not SeaStreamer files", () => {
  it("recognises a file by magic and version, not by name", () => {
    const { bytes } = FileEncoder.create({ ...header, fileName: "not-an-ss-name.txt" });
    expect(isSeaStreamerFile(bytes)).toBe(true);
    expect(isSeaStreamerFile(new TextEncoder().encode('{"json": true}'))).toBe(false);
    expect(isSeaStreamerFile(new Uint8Array([0x53, 0x73]))).toBeUndefined();
    expect(isSeaStreamerFile(new Uint8Array([0x53, 0x73, 0x02]))).toBe(false);
  });

  it("reports FILE_NOT_SEASTREAMER from the first wrong byte, without waiting for 128", () => {
    const decoder = new StreamDecoder();
    expect(decoder.push(new TextEncoder().encode("PK"))).toEqual([]);
    expect(fileErrorDetail(decoder.error)?.code).toBe("FILE_NOT_SEASTREAMER");
    expect(decoder.error?.message).toMatch(/\.ss file/);
    const outcome = decodeFile(new TextEncoder().encode("hello world, not a stream file"));
    expect(
      outcome.outcome.status === "damaged" && fileErrorDetail(outcome.outcome.error)?.code,
    ).toBe("FILE_NOT_SEASTREAMER");
  });

  it("reports an unsupported version", () => {
    const { bytes } = FileEncoder.create(header);
    bytes[2] = 2;
    const d = decodeFile(bytes);
    expect(d.outcome.status === "damaged" && fileErrorDetail(d.outcome.error)?.code).toBe(
      "FILE_VERSION_UNSUPPORTED",
    );
  });

  it("reports an empty file and a torn header as FILE_TRUNCATED at byte 0", () => {
    for (const bytes of [new Uint8Array(0), FileEncoder.create(header).bytes.subarray(0, 100)]) {
      const d = decodeFile(bytes);
      expect(d.outcome.status === "damaged" && fileErrorDetail(d.outcome.error)?.code).toBe(
        "FILE_TRUNCATED",
      );
      expect(d.outcome.status === "damaged" && fileErrorDetail(d.outcome.error)?.offset).toBe(0);
    }
  });

  it("reports a beacon interval under 128 as corrupt", () => {
    const { bytes } = FileEncoder.create(header);
    const view = new DataView(bytes.buffer);
    view.setUint32(4 + header.fileName.length + 8, 64);
    expect(codeOf(() => decodeHeader(bytes))).toBe("FILE_CORRUPT");
  });

  it("rejects a frame whose length field is over the reader's payload limit instead of waiting", () => {
    const { encoder, bytes } = FileEncoder.create(header);
    const frame = encoder.write({ ...ok, payload: new Uint8Array(100) });
    const decoder = new StreamDecoder({ maxMessageBytes: 50 });
    decoder.push(bytes);
    decoder.push(frame.subarray(0, 40));
    expect(fileErrorDetail(decoder.error)?.code).toBe("FRAME_TOO_LARGE");
    expect(fileErrorDetail(decoder.error)?.offset).toBe(128);
  });
});

describe("strict and lenient reading", () => {
  it("flags a frame without its final 0x0D in strict mode and reads it like upstream when lenient", () => {
    const { encoder, bytes } = FileEncoder.create(header);
    const frame = encoder.write(ok);
    frame[frame.length - 1] = 0x0a;
    const file = Buffer.concat([bytes, frame]);
    const strict = decodeFile(file);
    expect(strict.outcome.status === "damaged" && fileErrorDetail(strict.outcome.error)?.code).toBe(
      "FILE_CORRUPT",
    );
    expect(strict.messages).toHaveLength(0);
    const lenient = decodeFile(file, { strict: false });
    expect(lenient.outcome).toEqual({ status: "clean", end: file.length });
    expect(lenient.messages).toHaveLength(1);
  });

  it("stops at the end-of-stream frame and ignores whatever follows, as upstream readers do", () => {
    const { encoder, bytes } = FileEncoder.create(header);
    const body = encoder.write(ok);
    const eos = encoder.end(1_700_000_000_002);
    const after = encoder.write({ ...ok, seq: 2n });
    const file = Buffer.concat([bytes, body, eos, after, new Uint8Array([1, 2, 3])]);
    const d = decodeFile(file);
    expect(d.outcome).toEqual({ status: "eos", end: bytes.length + body.length + eos.length });
    expect(d.messages.map((m) => m.seq)).toEqual([1n, 0n]);
  });
});
