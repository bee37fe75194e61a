import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Delivery, HeaderMap, isRustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import {
  bufferReader,
  type DecodedMessage,
  decodeEnvelope,
  decodeFile,
  encodeEnvelope,
  FileConsumer,
  FileEncoder,
  findResumePoint,
  readMark,
} from "../src/formatEntry.js";
import { FileBroker, FileStream, PRIME_STREAM_KEY, TRANSACTION_HEADER } from "../src/index.js";
import { tempDir, text, utf8 } from "./tempDir.js";

// A transaction on a file is one run of frames, each marked with the run's start and its place in
// it. What the conformance suite cannot see from the broker's side: the marks themselves, a
// follower holding a run until its last frame is whole, a run a crash cut short (cut whole by the
// next writer, never read in part), and marks that do not hold up, which mark nothing.

const dir = tempDir("ruststream-file-transactions-");
let n = 0;
const fresh = () => join(dir, `t${++n}.ss`);

// Large enough for the 1 KiB beacons to land inside the run's frames.
const filler = "x".repeat(600);
const RUN: ReadonlyArray<readonly [string, string]> = [
  ["a", `a1 ${filler}`],
  ["b", `b1 ${filler}`],
  ["a", `a2 ${filler}`],
];

const body = (m: DecodedMessage) => text(decodeEnvelope(m.payload).payload).split(" ")[0];

/**
 * Publishes "before" to `a`, the transaction RUN, then "after" to `a`, through the broker. Answers
 * the file's bytes and its frames: before, the run's three, after.
 */
async function writeRun(path: string) {
  const broker = await new FileBroker({ path, beaconInterval: 1024 }).connect();
  const publisher = await broker.defaultPublishPolicy().pair(broker);
  await publisher.publish({ name: "a", payload: utf8("before") });
  await publisher.transaction(async (tx) => {
    for (const [name, payload] of RUN) await tx.publish({ name, payload: utf8(payload) });
  });
  await publisher.publish({ name: "a", payload: utf8("after") });
  await broker.shutdown();
  const bytes = new Uint8Array(readFileSync(path));
  const decoded = decodeFile(bytes);
  expect(decoded.outcome.status).toBe("clean");
  const frames = decoded.messages.filter((m) => m.streamKey !== PRIME_STREAM_KEY);
  expect(frames.map(body)).toEqual(["before", "a1", "b1", "a2", "after"]);
  return { bytes, frames, beacons: decoded.beacons };
}

/** Every message of `a` a reader reads to the end of the file, and the damage it ends with. */
async function replay(path: string): Promise<{ read: string[]; damage: unknown }> {
  const reader = await FileConsumer.open(path, { streamKey: "a" });
  const read: string[] = [];
  try {
    for await (const m of reader) read.push(body(m)!);
    return { read, damage: undefined };
  } catch (error) {
    return { read, damage: error };
  }
}

async function take(next: Promise<DecodedMessage | undefined>): Promise<string> {
  const m = await next;
  if (m === undefined) throw new Error("the reader ended");
  return body(m)!;
}

describe("a transaction's run of frames", () => {
  it("is marked frame by frame, read whole by any SeaStreamer reader, and handed out without its mark", async () => {
    const path = fresh();
    const { frames, beacons } = await writeRun(path);
    const run = frames.slice(1, 4);
    const start = run[0]!.offset;
    expect(run.map((m) => readMark(m.payload))).toEqual([
      { start, index: 1, count: 3 },
      { start, index: 2, count: 3 },
      { start, index: 3, count: 3 },
    ]);
    expect(readMark(frames[0]!.payload)).toBeUndefined();
    expect(readMark(frames[4]!.payload)).toBeUndefined();
    // Written in one piece, nothing between: each frame starts where the one before it ended, but
    // for a beacon, which does sit inside the run here.
    expect(beacons.some((b) => b.offset > start && b.offset < run[2]!.end)).toBe(true);

    const broker = await new FileBroker({ path }).connect();
    try {
      const sub = await broker.subscribe(new FileStream("a", { start: "beginning" }));
      const got: Delivery[] = [];
      while (got.length < 4) {
        const next = await sub.next();
        if (next.done) throw new Error("the subscription ended");
        got.push(next.value);
      }
      expect(got.map((d) => text(d.payload).split(" ")[0])).toEqual([
        "before",
        "a1",
        "a2",
        "after",
      ]);
      expect(got.some((d) => d.headers.has(TRANSACTION_HEADER))).toBe(false);
      await sub.close();
    } finally {
      await broker.shutdown();
    }
  });

  it("of one message is a plain frame, without a mark or an envelope", async () => {
    const path = fresh();
    const broker = await new FileBroker({ path }).connect();
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await publisher.transaction(async (tx) => tx.publish({ name: "a", payload: utf8("alone") }));
    await broker.shutdown();
    const [alone] = decodeFile(new Uint8Array(readFileSync(path))).messages.filter(
      (m) => m.streamKey === "a",
    );
    expect(text(alone!.payload)).toBe("alone");
  });

  it("refuses at tx.publish a message too large once marked, and writes nothing of its transaction", async () => {
    const path = fresh();
    const broker = await new FileBroker({ path, maxMessageBytes: 400 }).connect();
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    // Fits as a publish of its own (an envelope of its one header), not with a mark beside it.
    const headers = new HeaderMap().set("h", "v");
    const payload = utf8("y".repeat(260));
    expect(encodeEnvelope(payload, headers).length).toBeLessThanOrEqual(400);
    await publisher.publish({ name: "a", payload, headers });
    let refused: unknown;
    await publisher
      .transaction(async (tx) => {
        await tx.publish({ name: "a", payload: utf8("first") });
        await tx.publish({ name: "a", payload, headers });
      })
      .catch((error: unknown) => {
        refused = error;
      });
    expect(isRustStreamError(refused, "publish-refused"), String(refused)).toBe(true);
    expect(String(refused)).toContain("transaction mark");
    await broker.shutdown();
    const a = decodeFile(new Uint8Array(readFileSync(path))).messages.filter(
      (m) => m.streamKey === "a",
    );
    expect(a).toHaveLength(1);
  });
});

describe("a follower", () => {
  it("holds a run's frames until its last frame is whole, then hands them out in order", async () => {
    const whole = await writeRun(fresh());
    const [, a1, b1, a2] = whole.frames;
    const path = fresh();
    // The file as it stands while the run is written: its first two frames and half of its last.
    const torn = Math.floor((a2!.offset + a2!.end) / 2);
    writeFileSync(path, whole.bytes.subarray(0, torn));
    const reader = await FileConsumer.open(path, {
      streamKey: "a",
      follow: true,
      from: "beginning",
    });
    try {
      expect(await take(reader.next())).toBe("before");
      let handedOut = false;
      const next = reader.next().then((m) => {
        handedOut = true;
        return m;
      });
      // The reader has decoded both whole frames of the run (a1 is its own) and waits at the torn one.
      while (reader.offset < b1!.end) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(reader.offset).toBe(b1!.end);
      expect(a1!.end).toBeLessThan(reader.offset);
      await new Promise((resolve) => setImmediate(resolve));
      expect(handedOut, "a1 handed out before its transaction's last frame").toBe(false);

      appendFileSync(path, whole.bytes.subarray(torn));
      expect(await take(next)).toBe("a1");
      expect(await take(reader.next())).toBe("a2");
      expect(await take(reader.next())).toBe("after");
    } finally {
      reader.close();
    }
  });

  it("drops a run a crash cut short, and reads on from the writer that resumed the file", async () => {
    const whole = await writeRun(fresh());
    const a2 = whole.frames[3]!;
    const path = fresh();
    writeFileSync(path, whole.bytes.subarray(0, a2.offset + 10));
    const reader = await FileConsumer.open(path, {
      streamKey: "a",
      follow: true,
      from: "beginning",
    });
    try {
      expect(await take(reader.next())).toBe("before");
      const next = reader.next();
      // Holding a1, waiting at the torn a2.
      while (reader.offset < whole.frames[2]!.end) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // A writer reopening the file cuts the run back to its start and writes on from there.
      const broker = await new FileBroker({ path }).connect();
      const publisher = await broker.defaultPublishPolicy().pair(broker);
      const receipt = await publisher.publish({ name: "a", payload: utf8("resumed") });
      await broker.shutdown();
      expect(receipt.position).toBe("2");
      expect(await take(next)).toBe("resumed");
    } finally {
      reader.close();
    }
  });
});

describe("a run a crash cut short", () => {
  // Inside each frame of the run, at each frame's end but the last, and inside a beacon.
  const cuts = (frames: readonly DecodedMessage[]) => {
    const [, a1, b1, a2] = frames as [unknown, DecodedMessage, DecodedMessage, DecodedMessage];
    return [a1.offset + 1, a1.end - 1, a1.end, b1.offset + 40, b1.end, a2.offset + 5, a2.end - 1];
  };

  it("is never read in part, and the next writer cuts it whole", async () => {
    const whole = await writeRun(fresh());
    const start = whole.frames[1]!.offset;
    const expectedPoint = findResumePoint(bufferReader(whole.bytes.subarray(0, start)))!;
    const points = [...cuts(whole.frames), ...whole.beacons.map((b) => b.offset + 3)].filter(
      (cut) => cut > start && cut < whole.frames[3]!.end,
    );
    expect(points.length).toBeGreaterThan(7);
    for (const cut of points) {
      const path = fresh();
      writeFileSync(path, whole.bytes.subarray(0, cut));
      const point = findResumePoint(bufferReader(whole.bytes.subarray(0, cut)))!;
      expect({ cut, offset: point.offset }).toEqual({ cut, offset: expectedPoint.offset });
      expect(point.staleBytes).toBe(cut - expectedPoint.offset);

      // A reader of the torn file: "before", then nothing of the run (damage if a frame is torn).
      const { read, damage } = await replay(path);
      expect({ cut, read }).toEqual({ cut, read: ["before"] });
      if (damage !== undefined) expect(isRustStreamError(damage, "broker-failure")).toBe(true);

      const broker = await new FileBroker({ path, beaconInterval: 1024 }).connect();
      const publisher = await broker.defaultPublishPolicy().pair(broker);
      const a = await publisher.publish({ name: "a", payload: utf8("resumed") });
      const b = await publisher.publish({ name: "b", payload: utf8("b-resumed") });
      await broker.shutdown();
      // Sequences go on from what the file holds: the run's are written again.
      expect({ cut, a: a.position, b: b.position }).toEqual({ cut, a: "2", b: "1" });
      const healed = decodeFile(new Uint8Array(readFileSync(path)));
      expect(healed.outcome.status).toBe("clean");
      expect(
        healed.messages.filter((m) => m.streamKey !== PRIME_STREAM_KEY).map(body),
        `cut at ${cut}`,
      ).toEqual(["before", "resumed", "b-resumed"]);
      expect((await replay(path)).read).toEqual(["before", "resumed"]);
    }
  });
});

describe("a mark that does not hold up", () => {
  /** A file of `a` frames written by the format's own encoder, each payload made knowing its offset. */
  function encoded(payloads: ReadonlyArray<(offset: number) => Uint8Array>): Uint8Array {
    const { encoder, bytes } = FileEncoder.create({
      fileName: "marks.ss",
      createdAt: 1_700_000_000_000,
      beaconInterval: 1024,
    });
    const parts = [bytes];
    let seq = 0n;
    for (const payload of payloads) {
      parts.push(
        encoder.write({
          streamKey: "a",
          shard: 0n,
          seq: ++seq,
          timestamp: 1_700_000_000_000,
          payload: payload(encoder.offset),
        }),
      );
    }
    return Buffer.concat(parts);
  }
  const plain = (t: string) => () => utf8(t);
  const marked = (t: string, mark: (offset: number) => string) => (offset: number) =>
    encodeEnvelope(utf8(t), new HeaderMap().set(TRANSACTION_HEADER, mark(offset)));

  it("marks nothing when it names a start where no run begins: read, and never cut", async () => {
    const bytes = encoded([
      plain("one"),
      // Marks copied from elsewhere: the last frame of a run never begun, a first frame that is
      // not at its run's start, and, last in the file, a later frame of a run said to start inside
      // the frame before it (where a reader started too, so none of the run was before it).
      marked("two", () => "128 2/2"),
      marked("three", () => "128 1/2"),
      marked("four", (offset) => `${offset - 40} 2/3`),
    ]);
    const path = fresh();
    writeFileSync(path, bytes);
    expect((await replay(path)).read).toEqual(["one", "two", "three", "four"]);
    const point = findResumePoint(bufferReader(bytes))!;
    expect(point.offset).toBe(bytes.length);
    expect(point.staleBytes).toBe(0);
  });

  it("drops a run something else interrupted, and reads what interrupted it", async () => {
    let start = 0;
    const bytes = encoded([
      plain("one"),
      marked("r1", (offset) => {
        start = offset;
        return `${offset} 1/3`;
      }),
      marked("r2", () => `${start} 2/3`),
      // A writer that knew nothing of the run wrote on after the crash that cut it short.
      plain("foreign"),
    ]);
    const path = fresh();
    writeFileSync(path, bytes);
    expect((await replay(path)).read).toEqual(["one", "foreign"]);
    // Its last frame is whole and unmarked: nothing to cut.
    expect(findResumePoint(bufferReader(bytes))!.offset).toBe(bytes.length);
  });
});
