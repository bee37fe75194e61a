import { describe, expect, it } from "vitest";
import {
  type DecodedItem,
  decodeFile,
  FileEncoder,
  isEndOfStream,
  StreamDecoder,
} from "../src/index.js";
import {
  decodeClean,
  encodeAll,
  expectedFixture,
  FIXTURE_NAMES,
  fixture,
  text,
  toInteropLine,
} from "./helpers.js";

describe("sample files written by sea-streamer-file", () => {
  it("sample-1.ss: 28 messages on 4 stream keys, ending with end-of-stream", () => {
    const d = decodeFile(fixture("sample-1"));
    expect(d.header).toEqual({
      fileName: "vec_map-1694767177436.firedbg.ss",
      createdAt: 1694767177437,
      beaconInterval: 1024 * 1024,
    });
    expect(d.outcome).toEqual({ status: "eos", end: 3481 });
    expect(d.messages).toHaveLength(28);
    expect(new Set(d.messages.map((m) => m.streamKey))).toEqual(
      new Set(["file", "breakpoint", "event", "SEA_STREAMER_INTERNAL"]),
    );
    expect(d.beacons).toHaveLength(0);
    const events = d.messages.filter((m) => m.streamKey === "event");
    expect(events.map((m) => m.seq)).toEqual(Array.from({ length: 22 }, (_, i) => BigInt(i + 1)));
    expect(JSON.parse(text(d.messages[0]!.payload))).toMatchObject({
      id: 1,
      crate_name: "vec_map",
    });
    const eos = d.messages.at(-1)!;
    expect(isEndOfStream(eos)).toBe(true);
    expect(eos.end).toBe(3481);
    expect(eos.end - eos.offset).toBe(56);
  });

  it("consumer.ss: 101 messages, 4 beacons at 1024-byte intervals, frames split across them", () => {
    const d = decodeFile(fixture("consumer"));
    expect(d.header?.beaconInterval).toBe(1024);
    expect(d.outcome).toEqual({ status: "eos", end: 4830 });
    expect(d.messages).toHaveLength(101);
    const hello = d.messages.slice(0, 100);
    expect(hello.every((m) => m.streamKey === "hello" && m.shard === 1n)).toBe(true);
    expect(hello.map((m) => m.seq)).toEqual(Array.from({ length: 100 }, (_, i) => BigInt(i)));
    expect(hello.map((m) => text(m.payload))).toEqual(hello.map((_, i) => `hello-${i}`));
    expect(d.beacons.map((b) => b.offset)).toEqual([1024, 2048, 3072, 4096]);
    // The worked example of the format notes: seq 20 starts at 0x3FA, 6 bytes before the beacon.
    const seq20 = hello[20]!;
    expect(seq20.offset).toBe(0x3fa);
    expect(seq20.end).toBe(0x400 + 39 + 39);
    expect(d.beacons[0]).toMatchObject({ remaining: 39, size: 39 });
    expect(d.beacons[0]!.markers).toEqual([
      {
        streamKey: "hello",
        shard: 1n,
        seq: 20n,
        timestamp: seq20.timestamp,
        runningChecksum: 0x0b47,
      },
    ]);
  });

  it("quicksort.ss: 42 messages, no end-of-stream, clean end", () => {
    const d = decodeFile(fixture("quicksort"));
    expect(d.outcome).toEqual({ status: "clean", end: 8978 });
    expect(d.messages).toHaveLength(42);
    expect(d.messages.map((m) => m.seq)).toEqual(
      Array.from({ length: 42 }, (_, i) => BigInt(i + 1)),
    );
    expect(d.messages.every((m) => m.streamKey === "quicksort" && m.shard === 0n)).toBe(true);
    expect(text(d.messages[0]!.payload)).toContain("quicksort::main");
  });

  describe.each(FIXTURE_NAMES)("%s", (name) => {
    it("decodes to exactly what the Rust crate decodes (committed interop output)", () => {
      const expected = expectedFixture(name);
      const d = decodeFile(fixture(name));
      const header = expected[0];
      expect(header?.type).toBe("header");
      if (header?.type === "header") {
        expect(d.header).toEqual({
          fileName: header.file_name,
          createdAt: header.created_at,
          beaconInterval: header.beacon_interval,
        });
      }
      expect(d.messages.map(toInteropLine)).toEqual(expected.filter((l) => l.type === "message"));
      const end = expected.at(-1);
      expect(end?.type).toBe("end");
      if (end?.type === "end") {
        expect(d.outcome.status).toBe(end.reason === "eos" ? "eos" : "clean");
        expect(d.outcome.end).toBe(end.offset);
      }
    });

    it("re-encodes byte for byte from the decoded header and messages", () => {
      const bytes = fixture(name);
      const { header, messages } = decodeClean(bytes);
      const out = encodeAll(header, messages);
      expect(out.length).toBe(bytes.length);
      expect(Buffer.compare(Buffer.from(out), Buffer.from(bytes))).toBe(0);
    });

    it("re-encodes byte for byte when the end-of-stream frame comes from end()", () => {
      const bytes = fixture(name);
      const { header, messages } = decodeClean(bytes);
      const last = messages.at(-1)!;
      if (!isEndOfStream(last)) return;
      const { encoder, bytes: head } = FileEncoder.create(header);
      const body = messages.slice(0, -1).map((m) => encoder.write(m));
      const out = Buffer.concat([head, ...body, encoder.end(last.timestamp)]);
      expect(Buffer.compare(out, Buffer.from(bytes))).toBe(0);
    });

    it("decodes the same through the incremental decoder, whatever the chunk sizes", () => {
      const bytes = fixture(name);
      const whole = decodeFile(bytes);
      for (const size of [1, 2, 3, 7, 64, 127, 128, 129, 1000, 1024, 4096]) {
        const decoder = new StreamDecoder();
        const items: DecodedItem[] = [];
        for (let at = 0; at < bytes.length; at += size) {
          items.push(...decoder.push(bytes.slice(at, at + size)));
        }
        expect(decoder.pendingBytes).toBe(bytes.length - whole.outcome.end);
        expect(decoder.finish()).toEqual(whole.outcome);
        const messages = items.flatMap((i) => (i.kind === "message" ? [i.message] : []));
        const beacons = items.flatMap((i) => (i.kind === "beacon" ? [i.beacon] : []));
        expect(messages).toEqual(whole.messages);
        expect(beacons).toEqual(whole.beacons);
      }
    });
  });
});
