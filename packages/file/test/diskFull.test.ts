import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { isRustStreamError } from "@ruststream/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { decodeFile, FileConsumer, FileProducer, fileErrorDetail } from "../src/formatEntry.js";
import { FileBroker } from "../src/index.js";
import { rejection } from "./caught.js";
import { tempDir, text, utf8 } from "./tempDir.js";

// A disk that fills up under a writer and is freed again. The writes fail as a full disk fails
// them: the first call writes what still fits (part of a frame) and the next one is refused with
// ENOSPC. The chaos suite's `file-disk-full` does it on a real tmpfs; here the one system call the
// writer makes is wrapped, so the test needs no mount and no root. Reads pass through, noting where
// each ended, so a test waits for a follower to have read the half frame instead of guessing.

/** Bytes the disk still takes; `on` while it is full. Each fill leaves `room` bytes free. */
const full = { on: false, room: 0 };
/** Where each read from a file ended (offset of its last byte + 1), for a test to wait on. */
const readEnds: number[] = [];

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const writevSync: typeof fs.writevSync = (fd, buffers, position) => {
    if (!full.on) return fs.writevSync(fd, buffers, position);
    if (full.room === 0) {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), {
        code: "ENOSPC",
        errno: -28,
        syscall: "write",
      });
    }
    // What still fits is written, as the OS writes it: a short write, the next call refused.
    const fits: Uint8Array[] = [];
    let left = full.room;
    for (const b of buffers) {
      const take = Math.min(left, b.byteLength);
      if (take === 0) break;
      fits.push(new Uint8Array(b.buffer, b.byteOffset, take));
      left -= take;
    }
    const n = fs.writevSync(fd, fits, position);
    full.room -= n;
    return n;
  };
  // The writer lock's pid: refused on a disk with no room at all, as writev.
  const writeSync = ((fd: number, data: string) => {
    if (full.on && full.room === 0) {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), {
        code: "ENOSPC",
        errno: -28,
        syscall: "write",
      });
    }
    return fs.writeSync(fd, data);
  }) as typeof fs.writeSync;
  type ReadDone = (
    error: NodeJS.ErrnoException | null,
    n: number,
    buffer: NodeJS.ArrayBufferView,
  ) => void;
  const read = ((fd, buffer, offset, length, position, done: ReadDone) =>
    fs.read(fd, buffer, offset, length, position, (error, n, b) => {
      if (error === null && typeof position === "number") readEnds.push(position + n);
      done(error, n, b);
    })) as typeof fs.read;
  return {
    ...fs,
    default: { ...fs, writevSync, writeSync, read },
    writevSync,
    writeSync,
    read,
  };
});

/** Fills the disk, leaving `room` bytes. */
const fill = (room = 0): void => {
  full.on = true;
  full.room = room;
};

const dir = tempDir("ruststream-file-diskfull-");
let n = 0;
const fresh = () => join(dir, `d${++n}.ss`);

afterEach(() => {
  full.on = false;
});

/** Every message the file holds for `key`, as text, and whether it decodes clean to its end. */
function inFile(path: string, key: string): { payloads: string[]; status: string } {
  const { messages, outcome } = decodeFile(new Uint8Array(readFileSync(path)));
  return {
    payloads: messages.filter((m) => m.streamKey === key).map((m) => text(m.payload)),
    status: outcome.status,
  };
}

describe("a full disk under the writer", () => {
  it("fails the send with ENOSPC named, and the next send after the disk is freed is written", async () => {
    const path = fresh();
    const producer = FileProducer.open(path);
    await producer.send("k", utf8("one"));
    await producer.send("k", utf8("two"));

    fill(10);
    const error = await rejection(() => producer.send("k", utf8("three, lost to the full disk")));
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(fileErrorDetail(error)?.code).toBe("FILE_IO");
    expect(String(error)).toContain("ENOSPC");
    // Still full: the next send fails too, and says why.
    expect(String(await rejection(() => producer.send("k", utf8("four"))))).toContain("ENOSPC");

    full.on = false;
    const receipt = await producer.send("k", utf8("three"));
    await producer.send("k", utf8("four"));
    await producer.flush();
    producer.close();

    // The half frame is cut, and the sequence goes on from what the file holds.
    expect(receipt.seq).toBe(3n);
    expect(inFile(path, "k")).toEqual({
      payloads: ["one", "two", "three", "four"],
      status: "clean",
    });
  });

  it("lets a broker connection publish again once the disk is freed", async () => {
    const path = fresh();
    const broker = await new FileBroker({ path }).connect();
    const publisher = await broker.defaultPublishPolicy().pair(broker);
    await publisher.publish({ name: "k", payload: utf8("before") });

    fill(10);
    const error = await rejection(() => publisher.publish({ name: "k", payload: utf8("refused") }));
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(String(error)).toContain("ENOSPC");

    full.on = false;
    const receipt = await publisher.publish({ name: "k", payload: utf8("after") });
    expect(receipt.position).toBe("2");
    await broker.shutdown();
    expect(inFile(path, "k")).toEqual({ payloads: ["before", "after"], status: "clean" });
  });

  it("a disk full before the first publish leaves no lock behind: once freed, the next publish is written", async () => {
    const path = fresh();
    const broker = await new FileBroker({ path }).connect();
    const publisher = await broker.defaultPublishPolicy().pair(broker);

    fill(0);
    const error = await rejection(() => publisher.publish({ name: "k", payload: utf8("refused") }));
    expect(String(error)).toContain("ENOSPC");
    // Before the fix, the lock file stayed behind empty and every later publish, in this process
    // or the next, was refused as "being written by another process".
    expect(existsSync(`${path}.lock`)).toBe(false);

    full.on = false;
    const receipt = await publisher.publish({ name: "k", payload: utf8("after") });
    expect(receipt.position).toBe("1");
    await broker.shutdown();
    expect(inFile(path, "k")).toEqual({ payloads: ["after"], status: "clean" });
  });

  it("never shows a follower the half frame: it reads on past it to what was written after", async () => {
    const path = fresh();
    const producer = FileProducer.open(path);
    await producer.send("k", utf8("one"));
    const consumer = await FileConsumer.open(path, { streamKey: "k", follow: true, pollMs: 20 });
    expect(text((await consumer.next())!.payload)).toBe("one");

    fill(10);
    await rejection(() => producer.send("k", utf8("torn by the full disk, never to be read")));
    // The follower reads the half frame meanwhile, to the file's end, and waits for the rest of it.
    const torn = statSync(path).size;
    readEnds.length = 0;
    const waiting = consumer.next();
    await vi.waitFor(() => expect(readEnds).toContain(torn), { timeout: 5000, interval: 5 });

    full.on = false;
    await producer.send("k", utf8("two"));
    await producer.send("k", utf8("three"));
    const read = [await waiting, await consumer.next()].map((m) => text(m!.payload));
    expect(read).toEqual(["two", "three"]);
    consumer.close();
    producer.close();
  });

  it("confirms the frames of a write that made it whole before the disk filled, and refuses the rest", async () => {
    const path = fresh();
    const producer = FileProducer.open(path);
    const a = await producer.send("k", utf8("one"));
    const b = await producer.send("k", utf8("two"));
    const frame = b.offset - a.offset;

    // One turn, one write: room for the first frame and part of the second.
    fill(frame + 5);
    const sends = ["three", "four", "five"].map((m) => producer.send("k", utf8(m)));
    const [three, four, five] = await Promise.allSettled(sends);
    expect(three).toMatchObject({ status: "fulfilled", value: { seq: 3n } });
    expect(four?.status).toBe("rejected");
    expect(five?.status).toBe("rejected");

    full.on = false;
    // Sent again by a sender that was told they failed: each once in the file, in order.
    await producer.send("k", utf8("four"));
    await producer.send("k", utf8("five"));
    await producer.flush();
    producer.close();
    expect(inFile(path, "k")).toEqual({
      payloads: ["one", "two", "three", "four", "five"],
      status: "clean",
    });
  });
});
