import { existsSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isRustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import {
  decodeFile,
  FileConsumer,
  FileProducer,
  fileErrorDetail,
  isEndOfStream,
  lockPathOf,
} from "../src/formatEntry.js";
import { rejection, thrown } from "./caught.js";
import { tempDir, text, utf8 } from "./tempDir.js";

const dir = tempDir();
let n = 0;
const fresh = () => join(dir, `p${++n}.ss`);

function messagesOf(path: string) {
  return decodeFile(new Uint8Array(readFileSync(path))).messages.filter((m) => !isEndOfStream(m));
}

describe("FileProducer", () => {
  it("returns a receipt per send and numbers each stream from 1", async () => {
    const path = fresh();
    const p = FileProducer.open(path);
    const a = await p.send("orders", utf8("a"));
    const b = await p.send("orders", utf8("b"));
    const c = await p.send("audit", utf8("c"), 1_700_000_000_000);
    expect([a.seq, b.seq, c.seq]).toEqual([1n, 2n, 1n]);
    expect(a).toMatchObject({ streamKey: "orders", shard: 0n, offset: 128 });
    expect(c.timestamp).toBe(1_700_000_000_000);
    // Handed to the OS on resolve: a reader sees it before any flush.
    expect(messagesOf(path).map((m) => text(m.payload))).toEqual(["a", "b", "c"]);
    await p.flush();
    p.close();
    expect(existsSync(lockPathOf(path))).toBe(false);
  });

  it("creates the file's missing folders, unless existingOnly is set", async () => {
    const path = join(dir, `nested${++n}`, "deeper", "orders.ss");
    expect(() => FileProducer.open(path, { existingOnly: true })).toThrow(/existingOnly/);
    expect(existsSync(join(path, ".."))).toBe(false);
    const p = FileProducer.open(path);
    expect((await p.send("orders", utf8("a"))).seq).toBe(1n);
    p.close();
    expect(messagesOf(path).map((m) => text(m.payload))).toEqual(["a"]);
  });

  it("shares one writer between producers of one file in one process", async () => {
    const path = fresh();
    const p1 = FileProducer.open(path);
    const p2 = FileProducer.open(path);
    const sends = [p1.send("k", utf8("1")), p2.send("k", utf8("2")), p1.send("k", utf8("3"))];
    expect((await Promise.all(sends)).map((r) => r.seq)).toEqual([1n, 2n, 3n]);
    p1.close();
    expect(existsSync(lockPathOf(path))).toBe(true);
    await p2.send("k", utf8("4"));
    p2.close();
    expect(existsSync(lockPathOf(path))).toBe(false);
    expect(messagesOf(path).map((m) => m.seq)).toEqual([1n, 2n, 3n, 4n]);
  });

  it("resumes each stream's sequence when the file is reopened, with small intervals too", async () => {
    const path = fresh();
    const first = FileProducer.open(path, { beaconInterval: 1024 });
    for (let i = 0; i < 200; i++) await first.send(i % 3 === 0 ? "a" : "b", utf8(`m${i}`));
    first.close();
    const again = FileProducer.open(path, { beaconInterval: 4096 });
    expect(again.beaconInterval).toBe(1024); // an existing file keeps its interval
    const ra = await again.send("a", utf8("next-a"));
    const rb = await again.send("b", utf8("next-b"));
    const rc = await again.send("c", utf8("new"));
    again.close();
    expect([ra.seq, rb.seq, rc.seq]).toEqual([68n, 134n, 1n]);
    const decoded = decodeFile(new Uint8Array(readFileSync(path)));
    expect(decoded.outcome.status).toBe("clean");
    expect(decoded.messages).toHaveLength(203);
  });

  it("end() writes end-of-stream; reopening overwrites the marker and continues", async () => {
    const path = fresh();
    const p = FileProducer.open(path);
    await p.send("k", utf8("one"));
    await p.end();
    expect(decodeFile(new Uint8Array(readFileSync(path))).outcome.status).toBe("eos");
    const ended = await rejection(async () => p.send("k", utf8("x")));
    expect(isRustStreamError(ended, "closed")).toBe(true);
    expect(fileErrorDetail(ended)).toMatchObject({ code: "PRODUCER_CLOSED" });
    const q = FileProducer.open(path);
    expect((await q.send("k", utf8("two"))).seq).toBe(2n);
    q.close();
    const decoded = decodeFile(new Uint8Array(readFileSync(path)));
    expect(decoded.outcome.status).toBe("clean");
    expect(decoded.messages.map((m) => text(m.payload))).toEqual(["one", "two"]);
  });

  it("cuts a torn tail and continues after the last complete frame", async () => {
    const path = fresh();
    const p = FileProducer.open(path);
    for (let i = 0; i < 5; i++) await p.send("k", utf8(`m${i}`));
    p.close();
    truncateSync(path, statSync(path).size - 3);
    const q = FileProducer.open(path);
    const r = await q.send("k", utf8("after"));
    q.close();
    expect(r.seq).toBe(5n);
    const decoded = decodeFile(new Uint8Array(readFileSync(path)));
    expect(decoded.outcome.status).toBe("clean");
    expect(decoded.messages.map((m) => text(m.payload))).toEqual(["m0", "m1", "m2", "m3", "after"]);
  });

  it("refuses bad input with a clear error and writes nothing", async () => {
    const path = fresh();
    const p = FileProducer.open(path, { maxMessageBytes: 16 });
    const size = statSync(path).size;
    const badKey = thrown(() => p.send("bad key!", utf8("x")));
    expect(isRustStreamError(badKey, "invalid-argument")).toBe(true);
    expect(fileErrorDetail(badKey)).toMatchObject({ code: "INVALID_STREAM_KEY" });
    const longKey = thrown(() => p.send("k".repeat(250), utf8("x")));
    expect(isRustStreamError(longKey, "invalid-argument")).toBe(true);
    expect(fileErrorDetail(longKey)).toMatchObject({ code: "INVALID_STREAM_KEY" });
    const emptyKey = thrown(() => p.send("", utf8("x")));
    expect(isRustStreamError(emptyKey) && fileErrorDetail(emptyKey)).toBeTruthy();
    const tooLarge = thrown(() => p.send("k", new Uint8Array(17)));
    expect(isRustStreamError(tooLarge, "publish-refused")).toBe(true);
    expect(fileErrorDetail(tooLarge)).toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
    await p.send("k", new Uint8Array(16));
    p.close();
    expect(statSync(path).size).toBeGreaterThan(size);
    expect(messagesOf(path).map((m) => m.seq)).toEqual([1n]);

    const notSs = join(dir, "notes.ss");
    writeFileSync(notSs, "just some text, not a stream file\n");
    const notStreamFile = thrown(() => FileProducer.open(notSs));
    expect(isRustStreamError(notStreamFile, "invalid-argument")).toBe(true);
    expect(fileErrorDetail(notStreamFile)).toMatchObject({ code: "FILE_NOT_SEASTREAMER" });
    expect(readFileSync(notSs, "utf8")).toBe("just some text, not a stream file\n");
    expect(existsSync(lockPathOf(notSs))).toBe(false);
    const missing = thrown(() =>
      FileProducer.open(join(dir, "missing.ss"), { existingOnly: true }),
    );
    expect(isRustStreamError(missing, "invalid-argument")).toBe(true);
    expect(fileErrorDetail(missing)).toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("takes over a lock left by a process that no longer runs", async () => {
    const path = fresh();
    // A pid far above any pid_max in use: no such process.
    writeFileSync(lockPathOf(path), "99999999\n");
    const p = FileProducer.open(path);
    expect(readFileSync(lockPathOf(path), "utf8").trim()).toBe(String(process.pid));
    p.close();
  });

  it("refuses a lock held by a live process, naming it", () => {
    const path = fresh();
    writeFileSync(lockPathOf(path), `${process.ppid}\n`);
    const locked = thrown(() => FileProducer.open(path));
    expect(isRustStreamError(locked, "broker-failure")).toBe(true);
    expect(fileErrorDetail(locked)).toMatchObject({ code: "FILE_LOCKED" });
    expect(locked).toMatchObject({ message: expect.stringContaining(String(process.ppid)) });
  });
});

describe("FileConsumer", () => {
  async function filled(count: number, interval = 1024) {
    const path = fresh();
    const p = FileProducer.open(path, { beaconInterval: interval });
    for (let i = 1; i <= count; i++) {
      await p.send(i % 2 ? "odd" : "even", utf8(`m${i}`), 1_000_000 + i * 10);
    }
    p.close();
    return path;
  }

  async function all(c: FileConsumer): Promise<string[]> {
    const out: string[] = [];
    for await (const m of c) out.push(text(m.payload));
    return out;
  }

  it("replays from the beginning, a sequence number, a time and the end", async () => {
    const path = await filled(400);
    expect(await all(await FileConsumer.open(path))).toHaveLength(400);
    const bySeq = await all(
      await FileConsumer.open(path, { streamKey: "odd", from: { seq: 150n } }),
    );
    expect(bySeq[0]).toBe("m299");
    expect(bySeq).toHaveLength(51);
    const byTime = await all(
      await FileConsumer.open(path, { streamKey: "even", from: { timestamp: 1_000_000 + 3000 } }),
    );
    expect(byTime[0]).toBe("m302");
    expect(await all(await FileConsumer.open(path, { from: "end" }))).toEqual([]);
  });

  it("a close ends a waiting follower at once, whatever step of its wait it was in", async () => {
    const path = await filled(3);
    // A poll of a minute: a follower that waited one out after close would time this test out.
    for (let attempt = 0; attempt < 40; attempt++) {
      const c = await FileConsumer.open(path, { from: "end", follow: true, pollMs: 60_000 });
      const waiting = c.next();
      // Close on a later turn each time (microtasks, then I/O turns), so the close lands in
      // different steps of the wait: a read, a size check, the sleep.
      for (let turn = 0; turn < attempt % 20; turn++) {
        await (attempt < 20 ? Promise.resolve() : new Promise((resolve) => setImmediate(resolve)));
      }
      c.close();
      // Undefined, never an error from a descriptor closed under a read or a size check.
      expect(await waiting).toBeUndefined();
    }
  });

  it("follows a growing file and ends at end-of-stream", async () => {
    const path = fresh();
    const p = FileProducer.open(path);
    await p.send("k", utf8("before"));
    const c = await FileConsumer.open(path, { from: "end", follow: true, streamKey: "k" });
    const seen = all(c);
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 20));
      await p.send("k", utf8(`live${i}`));
    }
    await p.end();
    expect(await seen).toEqual(["live0", "live1", "live2"]);
  });

  it("returns every complete message before damage, then reports it with its offset", async () => {
    const path = await filled(10);
    const full = statSync(path).size;
    truncateSync(path, full - 5);
    const c = await FileConsumer.open(path);
    const got: string[] = [];
    let error: unknown;
    try {
      for await (const m of c) got.push(text(m.payload));
    } catch (e) {
      error = e;
    }
    expect(got).toHaveLength(9);
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(fileErrorDetail(error)?.code).toBe("FILE_TRUNCATED");
    expect(fileErrorDetail(error)?.offset).toBeGreaterThan(128);

    // A flipped payload byte: a checksum mismatch at that frame, nothing after it.
    const bytes = new Uint8Array(readFileSync(await filled(10)));
    const decoded = decodeFile(bytes);
    const victim = decoded.messages[4]!;
    const flipped = join(dir, "flipped.ss");
    bytes[victim.end - 4]! ^= 0xff;
    writeFileSync(flipped, bytes);
    const d = await FileConsumer.open(flipped);
    const before: string[] = [];
    const corrupt = await rejection(async () => {
      for await (const m of d) before.push(text(m.payload));
    });
    expect(isRustStreamError(corrupt, "broker-failure")).toBe(true);
    expect(fileErrorDetail(corrupt)).toMatchObject({ code: "FILE_CORRUPT", offset: victim.offset });
    expect(before).toEqual(["m1", "m2", "m3", "m4"]);
  });
});
