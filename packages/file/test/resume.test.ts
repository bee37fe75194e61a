import { isRustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import {
  bufferReader,
  type DecodedMessage,
  decodeFile,
  FileEncoder,
  type FileHeader,
  fileErrorDetail,
  findResumePoint,
  HEADER_SIZE,
  isEndOfStream,
  markersPerBeacon,
  type RandomAccessReader,
  recoverStreams,
} from "../src/formatEntry.js";
import { thrown } from "./caught.js";
import {
  diffMessages,
  encodeAll,
  FIXTURE_NAMES,
  fixture,
  foldBefore,
  workload,
} from "./helpers.js";

const idOf = (s: { streamKey: string; shard: bigint }) => `${s.streamKey}/${s.shard}`;

/** Counts the bytes a reader hands out, to show recovery reads the tail, not the file. */
function countingReader(bytes: Uint8Array): RandomAccessReader & { readBytes: number } {
  const inner = bufferReader(bytes);
  const counter = {
    size: inner.size,
    readBytes: 0,
    read(offset: number, length: number) {
      const out = inner.read(offset, length);
      counter.readBytes += out.length;
      return out;
    },
  };
  return counter;
}

/**
 * Cuts `file` at `cut`, resumes it the way a producer would (truncate the stale tail, seed every
 * recovered stream, append), and checks each step against what the uncut file says. Answers how
 * many beacons the appended part crossed, each of them checked.
 */
function checkCut(
  file: Uint8Array,
  messages: readonly DecodedMessage[],
  cut: number,
  appendSize: number,
): number {
  const prefix = file.subarray(0, cut);
  const reader = bufferReader(prefix);
  if (cut === 0) {
    expect(findResumePoint(reader)).toBeUndefined();
    return 0;
  }
  if (cut < HEADER_SIZE) {
    const error = thrown(() => findResumePoint(reader));
    expect(isRustStreamError(error) && fileErrorDetail(error)).toBeTruthy();
    return 0;
  }
  const point = findResumePoint(reader)!;
  const complete = messages.filter((m) => m.end <= cut);
  const eosIndex = complete.findIndex(isEndOfStream);
  const kept = eosIndex === -1 ? complete : complete.slice(0, eosIndex);
  const expectedOffset = kept.at(-1)?.end ?? HEADER_SIZE;
  expect({ cut, offset: point.offset }).toEqual({ cut, offset: expectedOffset });
  expect(point.endedWithEos).toBe(eosIndex !== -1);
  expect(point.staleBytes).toBe(cut - expectedOffset);
  const decoded = decodeFile(prefix);
  if (decoded.outcome.status === "damaged") {
    expect(fileErrorDetail(point.damage)?.code).toBe(fileErrorDetail(decoded.outcome.error)?.code);
    expect(fileErrorDetail(point.damage)?.offset).toBe(
      fileErrorDetail(decoded.outcome.error)?.offset,
    );
  } else {
    expect(point.damage).toBeUndefined();
  }

  // Recovered state equals a fold over the kept frames, per stream and for all at once.
  const folded = foldBefore(kept, Number.POSITIVE_INFINITY);
  const all = recoverStreams(reader, point);
  expect(new Map(all.map((s) => [idOf(s), s.state]))).toEqual(folded);
  const ids = [...new Set(kept.map(idOf))];
  for (const s of all) {
    const one = recoverStreams(reader, point, [s, { streamKey: "never-written", shard: 0n }]);
    expect(one.map((r) => [idOf(r), r.state])).toEqual([[idOf(s), folded.get(idOf(s))]]);
  }
  expect(all.map(idOf).sort()).toEqual(ids.sort());

  // Continue after the last good frame and read the whole thing back.
  const { encoder, bytes: resumeBytes } = FileEncoder.resume(
    point.header.beaconInterval,
    point.offset,
  );
  for (const s of all) encoder.seedStream(s, s.state);
  const first = all[0] ?? {
    streamKey: "fresh",
    shard: 0n,
    state: { seq: 0n, timestamp: 0, runningChecksum: 0xffff },
  };
  const added = [
    {
      streamKey: first.streamKey,
      shard: first.shard,
      seq: first.state.seq + 1n,
      timestamp: 1_900_000_000_000,
      payload: new Uint8Array(appendSize).fill(7),
    },
    {
      streamKey: "resumed",
      shard: 3n,
      seq: 1n,
      timestamp: 1_900_000_000_001,
      payload: new Uint8Array(appendSize).fill(9),
    },
  ];
  const resumed = Buffer.concat([
    prefix.subarray(0, point.offset),
    resumeBytes,
    ...added.map((m) => encoder.write(m)),
    encoder.end(1_900_000_000_002),
  ]);
  const back = decodeFile(resumed);
  expect({ cut, status: back.outcome.status }).toEqual({ cut, status: "eos" });
  expect(diffMessages(back.messages.slice(0, kept.length), kept)).toBeUndefined();
  expect(back.messages.slice(kept.length, -1).map((m) => [idOf(m), m.seq])).toEqual(
    added.map((m) => [idOf(m), m.seq]),
  );
  // Beacons written after the resume carry the exact chained state, not a restarted one, in as
  // many markers as the interval has room for.
  const crossed = back.beacons.filter((b) => b.offset > point.offset);
  for (const b of crossed) {
    const expected = foldBefore(back.messages, b.offset);
    expect(b.markers).toHaveLength(
      Math.min(expected.size, markersPerBeacon(point.header.beaconInterval)),
    );
    for (const m of b.markers) {
      const { streamKey: _k, shard: _s, ...state } = m;
      expect(state).toEqual(expected.get(idOf(m)));
    }
  }
  return crossed.length;
}

describe.each(FIXTURE_NAMES)("resuming %s", (name) => {
  const file = fixture(name);
  const { messages } = decodeFile(file);

  it("finds the end of the last frame before the end-of-stream marker", () => {
    const point = findResumePoint(bufferReader(file))!;
    const last = messages.filter((m) => !isEndOfStream(m)).at(-1)!;
    expect(point.offset).toBe(last.end);
    expect(point.endedWithEos).toBe(messages.some(isEndOfStream));
    expect(point.damage).toBeUndefined();
  });

  it("recovers state and continues safely from a cut at every offset", { timeout: 60_000 }, () => {
    const interval = decodeFile(file).header!.beaconInterval;
    let crossed = 0;
    for (let cut = 0; cut <= file.length; cut++)
      crossed += checkCut(file, messages, cut, interval <= 4096 ? 700 : 50);
    // Small appends never reach the next beacon of a 1 MiB interval; two of an interval each do.
    crossed += checkCut(file, messages, file.length, interval);
    expect(crossed).toBeGreaterThan(0);
  });
});

describe.each([
  [640, 40],
  [128, 25],
])("resuming a multi-stream file with frames spanning several beacons (interval %i)", (interval, count) => {
  const header: FileHeader = {
    fileName: "multi.ss",
    createdAt: 1_700_000_000_000,
    beaconInterval: interval,
  };
  const file = encodeAll(header, workload(5, count, 200, 1500));
  const { messages, beacons } = decodeFile(file);

  it("recovers state and continues safely from a cut at every offset", { timeout: 60_000 }, () => {
    // The case the fixtures lack: several streams per file and frames split by two or more beacons.
    expect(new Set(messages.map(idOf)).size).toBeGreaterThan(3);
    expect(
      messages.some(
        (m) => beacons.filter((b) => b.offset > m.offset && b.offset < m.end).length >= 2,
      ),
    ).toBe(true);
    let crossed = 0;
    for (let cut = 0; cut <= file.length; cut++) crossed += checkCut(file, messages, cut, 500);
    expect(crossed).toBeGreaterThan(0);
  });
});

describe("resume cost and alignment", () => {
  const header: FileHeader = {
    fileName: "long.ss",
    createdAt: 1_700_000_000_000,
    beaconInterval: 4096,
  };

  it("reads only the tail of a long file to find where to continue", () => {
    const long = encodeAll(header, workload(6, 5000, 300));
    const reader = countingReader(long);
    const point = findResumePoint(reader)!;
    expect(point.offset).toBe(long.length);
    expect(reader.readBytes).toBeLessThan(3 * 4096);
    // A stream written recently is found through the last beacons, not a scan from the start.
    const last = decodeFile(long).messages.at(-1)!;
    reader.readBytes = 0;
    const [state] = recoverStreams(reader, point, [last]);
    expect(state?.state.seq).toBe(last.seq);
    expect(reader.readBytes).toBeLessThan(long.length / 10);
  });

  it("writes an empty beacon first when the resume offset is on a boundary, like upstream", () => {
    const { bytes } = FileEncoder.resume(640, 1280);
    expect([...bytes]).toEqual([0x0d, 0, 0, 0, 0, 0, 0x0d]);
    expect(FileEncoder.resume(640, 1281).bytes).toHaveLength(0);
  });
});
