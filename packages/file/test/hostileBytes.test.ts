import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isRustStreamError } from "@ruststream/core";
import { childEnv, scriptCommand, within } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type DecodeOutcome,
  decodeFile,
  FileConsumer,
  FileEncoder,
  FileProducer,
  fileErrorDetail,
  StreamDecoder,
} from "../src/formatEntry.js";
import { FileBroker } from "../src/index.js";
import { rejection, thrown } from "./caught.js";
import { tempDir, text, utf8 } from "./tempDir.js";

// Bytes someone else wrote (a damaged disk, a buggy or hostile writer): every reader gives them a
// verdict, the same one however they arrive, without allocating or waiting for what a damaged
// length claims, and a writer never cuts what it cannot read.

const dir = tempDir("ruststream-file-hostile-");
let n = 0;
const fresh = () => join(dir, `h${++n}.ss`);

const INTERVAL = 1024;

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** A file of small frames on "k", and where each starts, written by the package's encoder. */
function smallFrames(count: number, size = 100): { file: Uint8Array; offsets: number[] } {
  const { encoder, bytes } = FileEncoder.create({
    fileName: "h.ss",
    createdAt: 1,
    beaconInterval: INTERVAL,
  });
  const parts = [bytes];
  const offsets: number[] = [];
  for (let seq = 1; seq <= count; seq++) {
    offsets.push(encoder.offset);
    parts.push(
      encoder.write({
        streamKey: "k",
        shard: 0n,
        seq: BigInt(seq),
        timestamp: seq,
        payload: new Uint8Array(size).fill(seq),
      }),
    );
  }
  return { file: concat(parts), offsets };
}

/** Writes `length` into the payload length field of the frame at `offset` (key "k"). */
function claimLength(file: Uint8Array, offset: number, length: number): void {
  new DataView(file.buffer, file.byteOffset).setUint32(offset + 1 + 1 + 24, length);
}

/** What an outcome says, comparable across decoders. */
function verdict(outcome: DecodeOutcome): unknown {
  if (outcome.status !== "damaged") return outcome;
  return { status: outcome.status, end: outcome.end, ...fileErrorDetail(outcome.error) };
}

function inPieces(bytes: Uint8Array, size: number): { messages: number; outcome: unknown } {
  const decoder = new StreamDecoder();
  let messages = 0;
  for (let at = 0; at < bytes.length; at += size) {
    for (const item of decoder.push(bytes.subarray(at, at + size))) {
      if (item.kind === "message") messages++;
    }
  }
  return { messages, outcome: verdict(decoder.finish()) };
}

describe("one verdict for the same bytes, whole or in pieces", () => {
  it("a damaged beacon inside a frame cut short is corrupt in pieces too, not truncated", () => {
    const { encoder, bytes } = FileEncoder.create({
      fileName: "v.ss",
      createdAt: 1,
      beaconInterval: INTERVAL,
    });
    const first = encoder.write({
      streamKey: "k",
      shard: 0n,
      seq: 1n,
      timestamp: 1,
      payload: utf8("before"),
    });
    const bigAt = encoder.offset;
    const big = encoder.write({
      streamKey: "k",
      shard: 0n,
      seq: 2n,
      timestamp: 2,
      payload: new Uint8Array(3000).fill(7),
    });
    const file = concat([bytes, first, big]);
    // The first beacon inside the big frame: a marker's stream key byte made a space, which no key
    // holds. The file is then cut after that beacon, before the frame's end.
    file[INTERVAL + 7] = 0x20;
    const cut = file.subarray(0, INTERVAL + 300);

    const whole = decodeFile(cut);
    expect(whole.messages.map((m) => text(m.payload))).toEqual(["before"]);
    expect(verdict(whole.outcome)).toEqual({
      status: "damaged",
      end: bigAt,
      code: "FILE_CORRUPT",
      offset: bigAt,
    });
    for (const size of [1, 7, 100, 1000, INTERVAL + 1]) {
      expect(inPieces(cut, size), `pieces of ${size}`).toEqual({
        messages: 1,
        outcome: verdict(whole.outcome),
      });
    }
  });

  it("a frame whose length was damaged upwards is corrupt at the first beacon it claims, whole or in pieces", () => {
    const { file, offsets } = smallFrames(30);
    claimLength(file, offsets[3]!, 200_000);
    const whole = decodeFile(file);
    expect(whole.messages).toHaveLength(3);
    expect(verdict(whole.outcome)).toMatchObject({ code: "FILE_CORRUPT", offset: offsets[3] });
    for (const size of [1, 64, 1000]) {
      expect(inPieces(file, size), `pieces of ${size}`).toEqual({
        messages: 3,
        outcome: verdict(whole.outcome),
      });
    }
  });
});

describe("a damaged length allocates nothing before its bytes exist", () => {
  it("a frame claiming nearly 4 GiB is a verdict, not a RangeError, with the data memory capped", () => {
    const child = fileURLToPath(new URL("./child/claimedLength.ts", import.meta.url));
    const packageDir = fileURLToPath(new URL("../", import.meta.url));
    // 3 GB of data (private writable memory, which a buffer is): the runtime and its loader run, an
    // allocation of the claimed size cannot. Not the address space (`ulimit -v`): Deno reserves
    // more of it than that for its heaps' cages at start, and dies before the script runs.
    const run = spawnSync(
      "sh",
      ["-c", 'ulimit -d 3000000 && exec "$@"', "sh", ...scriptCommand(child)],
      {
        cwd: packageDir,
        encoding: "utf8",
        env: childEnv(),
      },
    );
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      status: "damaged",
      messages: 0,
      code: "FILE_TRUNCATED",
      offset: 128,
    });
  });
});

describe("a follower behind a damaged length", () => {
  it("stops at the first beacon that contradicts the length instead of waiting for it", async () => {
    const { file, offsets } = smallFrames(40);
    claimLength(file, offsets[1]!, 200_000);
    const path = fresh();
    // The damaged frame's head is there; what comes after it is appended once the follower waits.
    writeFileSync(path, file.subarray(0, offsets[2]!));
    const c = await FileConsumer.open(path, { follow: true, streamKey: "k", pollMs: 20 });
    expect((await c.next())!.seq).toBe(1n);
    const waiting = c.next();
    appendFileSync(path, file.subarray(offsets[2]!));
    const damage = await rejection(() => within(10_000, "the verdict", waiting));
    expect(isRustStreamError(damage, "broker-failure")).toBe(true);
    expect(fileErrorDetail(damage)).toMatchObject({ code: "FILE_CORRUPT", offset: offsets[1] });
    c.close();
  });

  it("stops at once at a length over its maxMessageBytes (16 MiB unless set)", async () => {
    for (const [claim, maxMessageBytes] of [
      [100 * 1024 * 1024, undefined],
      [5000, 1000],
    ] as const) {
      const { file, offsets } = smallFrames(3);
      claimLength(file, offsets[1]!, claim);
      const path = fresh();
      writeFileSync(path, file);
      const c = await FileConsumer.open(path, {
        follow: true,
        streamKey: "k",
        pollMs: 20,
        ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
      });
      expect((await c.next())!.seq).toBe(1n);
      const damage = await rejection(() => within(10_000, "the verdict", c.next()));
      expect(isRustStreamError(damage, "broker-failure")).toBe(true);
      expect(fileErrorDetail(damage)).toEqual({ code: "FRAME_TOO_LARGE", offset: offsets[1] });
      expect((damage as Error).message).toMatch(/raise maxMessageBytes/);
      c.close();
    }
  });

  it("reads frames up to its maxMessageBytes, and the broker's subscriptions read to the broker's", async () => {
    const path = fresh();
    const big = new Uint8Array(17 * 1024 * 1024).fill(1);
    const connected = await new FileBroker({ path, maxMessageBytes: 18 * 1024 * 1024 }).connect();
    const sub = await connected.subscribe("big");
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: "big", payload: big });
    const next = await within(30_000, "the large message", sub.next());
    expect(next.done === false && next.value.payload.length).toBe(big.length);
    await connected.shutdown();
    const refused = await FileConsumer.open(path, { streamKey: "big" });
    const damage = await rejection(() => refused.next());
    expect(fileErrorDetail(damage)?.code).toBe("FRAME_TOO_LARGE");
    refused.close();
  });
});

describe("a writer reopening a file with a frame over its limit", () => {
  it("refuses to cut it (and what follows), leaving the file as it was", async () => {
    const path = fresh();
    const wide = FileProducer.open(path, { maxMessageBytes: 4096 });
    await wide.send("k", utf8("first"));
    await wide.send("k", new Uint8Array(3000).fill(3));
    await wide.send("k", utf8("after"));
    await wide.flush();
    wide.close();
    const size = statSync(path).size;
    const error = thrown(() => FileProducer.open(path, { maxMessageBytes: 1024 }));
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(fileErrorDetail(error)?.code).toBe("FRAME_TOO_LARGE");
    expect(statSync(path).size).toBe(size);
    const kept = decodeFile(new Uint8Array(readFileSync(path))).messages;
    expect(kept.filter((m) => m.streamKey === "k").map((m) => m.payload.length)).toEqual([
      5, 3000, 5,
    ]);
  });
});
