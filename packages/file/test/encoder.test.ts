import { describe, expect, it } from "vitest";
import {
  type Beacon,
  type DecodedMessage,
  decodeFile,
  FileEncoder,
  type FileHeader,
  markersPerBeacon,
  StreamDecoder,
} from "../src/formatEntry.js";
import { diffMessages, foldBefore, workload } from "./helpers.js";

/** The upstream rotation, modelled independently of the encoder. */
function expectedMarkerIds(
  beacons: readonly Beacon[],
  messages: readonly DecodedMessage[],
  interval: number,
) {
  let count = 0;
  return beacons.map((b) => {
    const ids = [...foldBefore(messages, b.offset).keys()].sort((x, y) => {
      const [kx, sx] = [x.slice(0, x.lastIndexOf("/")), BigInt(x.slice(x.lastIndexOf("/") + 1))];
      const [ky, sy] = [y.slice(0, y.lastIndexOf("/")), BigInt(y.slice(y.lastIndexOf("/") + 1))];
      return kx !== ky ? (kx < ky ? -1 : 1) : sx < sy ? -1 : sx > sy ? 1 : 0;
    });
    const take = Math.min(ids.length, markersPerBeacon(interval));
    const picked = Array.from({ length: take }, (_, i) => ids[(count + i) % ids.length]!);
    count += take;
    return picked;
  });
}

describe.each([128, 640, 1024, 2048, 4096])("beacon interval %i", (interval) => {
  const header: FileHeader = {
    fileName: `rt-${interval}.ss`,
    createdAt: 1_700_000_000_000,
    beaconInterval: interval,
  };
  const input = workload(interval, 300, 700, interval * 2);
  const { encoder, bytes: head } = FileEncoder.create(header);
  const file = Buffer.concat([
    head,
    ...input.map((m) => encoder.write(m)),
    encoder.end(1_800_000_000_000),
  ]);
  const d = decodeFile(file);

  it("decodes back to the same messages, frames larger than the interval included", () => {
    expect(d.outcome).toEqual({ status: "eos", end: file.length });
    expect(encoder.offset).toBe(file.length);
    const back = d.messages.slice(0, -1).map(({ streamKey, shard, seq, timestamp, payload }) => ({
      streamKey,
      shard,
      seq,
      timestamp,
      payload: Buffer.from(payload),
    }));
    expect(back).toEqual(input.map((m) => ({ ...m, payload: Buffer.from(m.payload) })));
    expect(d.messages.some((m) => m.end - m.offset > interval)).toBe(true);
  });

  it("places a beacon at every interval boundary", () => {
    const boundaries = Array.from(
      { length: Math.floor((file.length - 1) / interval) },
      (_, i) => (i + 1) * interval,
    );
    expect(d.beacons.map((b) => b.offset)).toEqual(boundaries);
    // At 128 the first beacon sits right after the header: nothing before it to mark or finish.
    expect(d.beacons[0]).toMatchObject(
      interval === 128 ? { offset: 128, remaining: 0, markers: [] } : { offset: interval },
    );
  });

  it("fills markers by upstream's rotation, each one a fold over the frames before it", () => {
    const ids = expectedMarkerIds(d.beacons, d.messages, interval);
    d.beacons.forEach((b, i) => {
      expect(b.markers.map((m) => `${m.streamKey}/${m.shard}`)).toEqual(ids[i]);
      const folded = foldBefore(d.messages, b.offset);
      for (const m of b.markers) {
        const { streamKey: _k, shard: _s, ...state } = m;
        expect(state).toEqual(folded.get(`${m.streamKey}/${m.shard}`));
      }
    });
  });

  it("decodes the same when fed one byte at a time or in odd chunks", () => {
    const whole = d.messages;
    for (const chunk of [1, 333]) {
      const decoder = new StreamDecoder();
      const got: DecodedMessage[] = [];
      for (let at = 0; at < file.length; at += chunk) {
        for (const item of decoder.push(file.subarray(at, at + chunk))) {
          if (item.kind === "message") got.push(item.message);
        }
      }
      expect(diffMessages(got, whole)).toBeUndefined();
    }
  });
});

describe("large frames", () => {
  it("decodes a 32 MiB payload fed in 4 KiB chunks without re-copying what it holds", () => {
    const header: FileHeader = { fileName: "big.ss", createdAt: 1, beaconInterval: 1 << 20 };
    const payload = new Uint8Array(32 << 20).map((_, i) => i & 0xff);
    const { encoder, bytes } = FileEncoder.create(header, { maxMessageBytes: payload.length });
    const frame = encoder.write({ streamKey: "big", shard: 0n, seq: 1n, timestamp: 2, payload });
    const file = Buffer.concat([bytes, frame]);
    const decoder = new StreamDecoder();
    const got: DecodedMessage[] = [];
    for (let at = 0; at < file.length; at += 4096) {
      for (const item of decoder.push(file.subarray(at, at + 4096))) {
        if (item.kind === "message") got.push(item.message);
      }
    }
    expect(decoder.finish()).toEqual({ status: "clean", end: file.length });
    expect(got).toHaveLength(1);
    expect(Buffer.compare(got[0]!.payload, payload)).toBe(0);
    // One beacon per MiB crossed, each recording the bytes of the frame still to come.
    const beacons = decodeFile(file).beacons;
    expect(beacons).toHaveLength(32);
    expect(beacons.every((b) => b.remaining > 0 && b.markers.length === 1)).toBe(true);
  });
});

describe("frames carved from shared buffers", () => {
  it("leaves every returned frame as it was while later ones are encoded", () => {
    const header: FileHeader = { fileName: "slab.ss", createdAt: 1, beaconInterval: 1 << 20 };
    const { encoder, bytes } = FileEncoder.create(header);
    // Enough 512-byte frames to fill several 64 KiB buffers, and a 20 KiB one that gets its own.
    const sizes = [...Array.from({ length: 400 }, () => 512), 20 << 10, 512];
    const frames: Uint8Array[] = [];
    const snapshots: Uint8Array[] = [];
    sizes.forEach((size, i) => {
      const payload = new Uint8Array(size).fill(i & 0xff);
      const frame = encoder.write({
        streamKey: "k",
        shard: 0n,
        seq: BigInt(i + 1),
        timestamp: i,
        payload,
      });
      frames.push(frame);
      snapshots.push(frame.slice());
    });
    expect(frames.map((frame, i) => Buffer.compare(frame, snapshots[i]!))).toEqual(
      frames.map(() => 0),
    );
    const decoded = decodeFile(Buffer.concat([bytes, ...frames]));
    expect(decoded.outcome.status).toBe("clean");
    expect(decoded.messages.map((m) => m.payload.length)).toEqual(sizes);
    expect(decoded.messages.every((m, i) => m.payload.every((b) => b === (i & 0xff)))).toBe(true);
  });
});
