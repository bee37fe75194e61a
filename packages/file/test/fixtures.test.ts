import { describe, expect, it } from "vitest";
import {
  crc16Cdma2000,
  type DecodedItem,
  type DecodedMessage,
  decodeFile,
  FileEncoder,
  isEndOfStream,
  runningChecksumUpdate,
  StreamDecoder,
} from "../src/formatEntry.js";
import {
  decodeClean,
  encodeAll,
  endLine,
  expectedFixture,
  FIXTURE_NAMES,
  type FixtureName,
  fixture,
  headerLine,
  messageLines,
  text,
  toInteropLine,
} from "./helpers.js";

// The facts below were worked out from the bytes with the format notes (header, frame and beacon
// layouts, CRC-16/CDMA2000) and from what tooling/interop/src/fixtures.rs writes, not read off our
// decoder; fixtures/README.md describes each file.

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const u64 = (n: number | bigint): string => BigInt(n).toString(16).padStart(16, "0");
const range = (from: number, count: number): bigint[] =>
  Array.from({ length: count }, (_, i) => BigInt(from + i));
const ofStream = (messages: readonly DecodedMessage[], key: string): DecodedMessage[] =>
  messages.filter((m) => m.streamKey === key);

/** The last frame, which must be the end-of-stream frame. */
function eosFrame(messages: readonly DecodedMessage[]): DecodedMessage {
  const last = messages.at(-1);
  if (last === undefined || !isEndOfStream(last)) {
    throw new Error("expected the file to end with its end-of-stream frame");
  }
  return last;
}

describe("multi-key.ss (sea-streamer-file): several stream keys, then end-of-stream", () => {
  const bytes = fixture("multi-key");
  const d = decodeFile(bytes);

  it("has the fixed header it was written with and no beacon", () => {
    expect(d.header).toEqual({
      fileName: "multi-key.ss",
      createdAt: Date.parse("2023-11-14T22:13:20.000Z"),
      beaconInterval: 1024 * 1024,
    });
    expect(bytes.length).toBe(2180);
    expect(d.beacons).toEqual([]);
  });

  it("holds 24 messages on four keys, each numbered from 1 on its own shard", () => {
    expect(d.messages).toHaveLength(25);
    const byKey = (key: string) => ofStream(d.messages, key);
    expect(byKey("orders").map((m) => m.seq)).toEqual(range(1, 10));
    expect(byKey("payments").map((m) => m.seq)).toEqual(range(1, 7));
    expect(byKey("audit.log").map((m) => m.seq)).toEqual(range(1, 5));
    expect(byKey("Zeta").map((m) => m.seq)).toEqual(range(1, 2));
    expect(new Set(byKey("audit.log").map((m) => m.shard))).toEqual(new Set([2n]));
    expect(JSON.parse(text(d.messages[0]!.payload))).toEqual({ order: 1, sku: "SKU-007", qty: 2 });
    expect(d.messages[0]!.timestamp).toBe(1_700_000_000_001);
    const [empty, allBytes] = byKey("Zeta");
    expect(empty!.payload).toHaveLength(0);
    expect([...allBytes!.payload]).toEqual(Array.from({ length: 256 }, (_, i) => 255 - i));
  });

  it("ends with the 56-byte end-of-stream frame at 2124", () => {
    expect(d.outcome).toEqual({ status: "eos", end: 2180 });
    const eos = eosFrame(d.messages);
    expect(eos).toMatchObject({ offset: 2124, end: 2180, streamKey: "SEA_STREAMER_INTERNAL" });
    expect([eos.shard, eos.seq, eos.timestamp, text(eos.payload)]).toEqual([
      0n,
      0n,
      1_700_000_000_200,
      "EOS",
    ]);
  });
});

describe("beacons.ss (sea-streamer-file): frames split by beacons at 1024-byte intervals", () => {
  const bytes = fixture("beacons");
  const d = decodeFile(bytes);
  const ticks = ofStream(d.messages, "ticks");
  const alarms = ofStream(d.messages, "alarms");

  it("holds 100 messages on two streams, then end-of-stream", () => {
    expect(d.header).toEqual({
      fileName: "beacons.ss",
      createdAt: Date.parse("2023-11-14T22:15:00.000Z"),
      beaconInterval: 1024,
    });
    expect(d.outcome).toEqual({ status: "eos", end: 4753 });
    expect(d.messages).toHaveLength(101);
    expect(eosFrame(d.messages).timestamp).toBe(1_700_000_100_300);
    expect(ticks.map((m) => m.seq)).toEqual(range(0, 90));
    expect(ticks.every((m) => m.shard === 1n)).toBe(true);
    expect(ticks.map((m) => text(m.payload))).toEqual(
      ticks.map((_, i) => `tick-${String(i).padStart(2, "0")}`),
    );
    expect(alarms.map((m) => text(m.payload))).toEqual(alarms.map((_, i) => `alarm-${i + 1}`));
    // Every tenth message is an alarm.
    expect(d.messages.flatMap((m, i) => (m.streamKey === "alarms" ? [i] : []))).toEqual([
      9, 19, 29, 39, 49, 59, 69, 79, 89, 99,
    ]);
  });

  it("has a beacon at each 1024-byte boundary, each splitting a frame", () => {
    expect(d.beacons.map((b) => [b.offset, b.remaining, b.size])).toEqual([
      [1024, 30, 40],
      [2048, 16, 39],
      [3072, 1, 40],
      [4096, 31, 39],
    ]);
    const split = d.messages.filter((m) =>
      d.beacons.some((b) => m.offset < b.offset && b.offset < m.end),
    );
    expect(split.map((m) => [m.streamKey, m.seq, m.offset])).toEqual([
      ["ticks", 18n, 0x3f2],
      ["ticks", 38n, 0x7e4],
      ["ticks", 58n, 0xbd5],
      ["ticks", 79n, 0xff3],
    ]);
  });

  it("worked example: ticks seq 18 starts at 0x3F2, 14 bytes before the beacon at 0x400", () => {
    const seq18 = ticks[18]!;
    // 44 bytes of frame (5 + 32 + 7): its key and shard before the beacon, the other 30 after.
    expect(seq18.offset).toBe(0x3f2);
    expect(hex(bytes.subarray(0x3f2, 0x400))).toBe(`05${hex(Buffer.from("ticks"))}${u64(1)}`);
    // The beacon's one marker is for `alarms`, not the stream being split: markers rotate over the
    // streams in key order by the count of markers written so far (0 here), and "alarms" < "ticks".
    expect(crc16Cdma2000(Buffer.from("alarm-1"))).toBe(0x1dee);
    expect(crc16Cdma2000(Buffer.from("alarm-2"))).toBe(0x8d20);
    expect(runningChecksumUpdate(runningChecksumUpdate(0xffff, 0x1dee), 0x8d20)).toBe(0xbaba);
    expect(hex(bytes.subarray(0x400, 0x428))).toBe(
      [
        "0d", // beacon start
        "0000001e", // 30 bytes of the split frame follow the beacon
        "01", // one marker
        `06${hex(Buffer.from("alarms"))}`,
        u64(0), // shard
        u64(2), // its highest sequence so far: alarm-2
        u64(1_700_000_100_041), // and that message's time
        "baba", // running checksum over the CRCs of alarm-1 (0x1dee) and alarm-2 (0x8d20)
        "0d",
      ].join(""),
    );
    expect(hex(bytes.subarray(0x428, 0x428 + 30))).toBe(
      [u64(18), u64(1_700_000_100_043), "00000007", hex(Buffer.from("tick-18")), "b180", "0d"].join(
        "",
      ),
    );
    expect(seq18.end).toBe(0x428 + 30);
    expect(d.beacons[0]!.markers).toEqual([
      {
        streamKey: "alarms",
        shard: 0n,
        seq: 2n,
        timestamp: 1_700_000_100_041,
        runningChecksum: 0xbaba,
      },
    ]);
  });

  it("rotates the beacon's one marker between the two streams, counting the frame being split", () => {
    expect(
      d.beacons.map((b) => b.markers.map((m) => [m.streamKey, m.seq, m.runningChecksum])),
    ).toEqual([
      [["alarms", 2n, 0xbaba]],
      // ticks seq 38 is the frame split by this beacon: its state counts before the splice.
      [["ticks", 38n, 0x6d18]],
      [["alarms", 6n, 0xc9f5]],
      [["ticks", 79n, 0x6bd5]],
    ]);
  });
});

describe("no-eos.ss (sea-streamer-file): no end-of-stream, a clean end", () => {
  const bytes = fixture("no-eos");
  const d = decodeFile(bytes);

  it("ends clean after its last complete frame, with no end-of-stream frame", () => {
    expect(d.header).toEqual({
      fileName: "no-eos.ss",
      createdAt: Date.parse("2023-11-14T22:16:40.000Z"),
      beaconInterval: 2048,
    });
    expect(d.outcome).toEqual({ status: "clean", end: 8430 });
    expect(d.messages.filter(isEndOfStream)).toEqual([]);
    expect(d.messages.map((m) => [m.streamKey, m.shard])).toEqual(
      d.messages.map(() => ["trace", 0n]),
    );
    expect(d.messages.map((m) => m.seq)).toEqual(range(1, 30));
    expect(d.messages.at(-1)!.end).toBe(8430);
  });

  it("splits seq 17's 4200-byte payload with two beacons", () => {
    const seq17 = d.messages[16]!;
    expect(seq17.payload).toHaveLength(4200);
    // 4237 bytes of frame from 0x90E: 1778 before 0x1000, 2009 between the two beacons (2048 less
    // the 39-byte beacon), the last 450 after 0x1800.
    expect([seq17.offset, seq17.end]).toEqual([0x90e, 0x1800 + 39 + 450]);
    expect(d.beacons.map((b) => [b.offset, b.remaining])).toEqual([
      [0x800, 6],
      [0x1000, 2459],
      [0x1800, 450],
      [0x2000, 57],
    ]);
    expect(d.beacons[1]!.markers).toEqual(d.beacons[2]!.markers);
    expect(d.beacons[1]!.markers[0]).toMatchObject({ streamKey: "trace", seq: 17n });
  });

  it("re-encodes byte for byte, and end() appends exactly the 56-byte end-of-stream frame", () => {
    const { header, messages } = decodeClean(bytes);
    const { encoder, bytes: head } = FileEncoder.create(header);
    const body = messages.map((m) => encoder.write(m));
    expect(Buffer.compare(Buffer.concat([head, ...body]), Buffer.from(bytes))).toBe(0);
    const at = 1_700_000_200_400;
    const eos = encoder.end(at);
    // 8430 is 238 bytes into an interval: no beacon falls inside the frame.
    expect(hex(eos)).toBe(
      [
        `15${hex(Buffer.from("SEA_STREAMER_INTERNAL"))}`,
        u64(0),
        u64(0),
        u64(at),
        "00000003",
        hex(Buffer.from("EOS")),
        "ed7c", // CRC-16/CDMA2000 of "EOS"
        "0d",
      ].join(""),
    );
    const ended = decodeFile(new Uint8Array(Buffer.concat([bytes, eos])));
    expect(ended.outcome).toEqual({ status: "eos", end: 8430 + 56 });
    expect(ended.messages.slice(0, -1)).toEqual(d.messages);
  });
});

/** Fixtures that end with an end-of-stream frame; no-eos.ss is the one that does not. */
const ENDING_WITH_EOS = [
  "multi-key",
  "beacons",
  "broker-envelopes",
] as const satisfies readonly FixtureName[];

describe("every fixture", () => {
  it("is either one ending with end-of-stream or no-eos.ss", () => {
    expect([...ENDING_WITH_EOS, "no-eos"].sort()).toEqual([...FIXTURE_NAMES].sort());
  });

  describe.each(FIXTURE_NAMES)("%s", (name) => {
    it("decodes to exactly what the Rust crate decodes (committed interop output)", () => {
      const expected = expectedFixture(name);
      const d = decodeFile(fixture(name));
      const header = headerLine(expected);
      expect(d.header).toEqual({
        fileName: header.file_name,
        createdAt: header.created_at,
        beaconInterval: header.beacon_interval,
      });
      expect(d.messages.map(toInteropLine)).toEqual(messageLines(expected));
      const end = endLine(expected);
      expect(d.outcome).toEqual({
        status: end.reason === "eos" ? "eos" : "clean",
        end: end.offset,
      });
      expect(expected).toHaveLength(d.messages.length + 2);
    });

    it("re-encodes byte for byte from the decoded header and messages", () => {
      const bytes = fixture(name);
      const { header, messages } = decodeClean(bytes);
      const out = encodeAll(header, messages);
      expect(out.length).toBe(bytes.length);
      expect(Buffer.compare(Buffer.from(out), Buffer.from(bytes))).toBe(0);
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

  describe.each(ENDING_WITH_EOS)("%s", (name) => {
    it("re-encodes byte for byte when the end-of-stream frame comes from end()", () => {
      const bytes = fixture(name);
      const { header, messages } = decodeClean(bytes);
      const eos = eosFrame(messages);
      expect(messages.filter(isEndOfStream)).toEqual([eos]);
      const { encoder, bytes: head } = FileEncoder.create(header);
      const body = messages.slice(0, -1).map((m) => encoder.write(m));
      const out = Buffer.concat([head, ...body, encoder.end(eos.timestamp)]);
      expect(Buffer.compare(out, Buffer.from(bytes))).toBe(0);
    });
  });
});
