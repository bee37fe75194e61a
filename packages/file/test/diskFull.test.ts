import { readFileSync } from "node:fs";
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
// writer makes is wrapped, so the test needs no mount and no root.

const full = { on: false };

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  let wroteSome = false;
  const writevSync: typeof fs.writevSync = (fd, buffers, position) => {
    if (!full.on) {
      wroteSome = false;
      return fs.writevSync(fd, buffers, position);
    }
    const first = buffers[0];
    if (!wroteSome && first !== undefined && first.byteLength > 1) {
      // What still fits: half of the first frame.
      wroteSome = true;
      const half = new Uint8Array(first.buffer, first.byteOffset, first.byteLength >> 1);
      return fs.writevSync(fd, [half], position);
    }
    throw Object.assign(new Error("ENOSPC: no space left on device, write"), {
      code: "ENOSPC",
      errno: -28,
      syscall: "write",
    });
  };
  return { ...fs, default: { ...fs, writevSync }, writevSync };
});

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

    full.on = true;
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

    full.on = true;
    const error = await rejection(() => publisher.publish({ name: "k", payload: utf8("refused") }));
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(String(error)).toContain("ENOSPC");

    full.on = false;
    const receipt = await publisher.publish({ name: "k", payload: utf8("after") });
    expect(receipt.position).toBe("2");
    await broker.shutdown();
    expect(inFile(path, "k")).toEqual({ payloads: ["before", "after"], status: "clean" });
  });

  it("never shows a follower the half frame: it reads on past it to what was written after", async () => {
    const path = fresh();
    const producer = FileProducer.open(path);
    await producer.send("k", utf8("one"));
    const consumer = await FileConsumer.open(path, { streamKey: "k", follow: true, pollMs: 20 });
    expect(text((await consumer.next())!.payload)).toBe("one");

    full.on = true;
    await rejection(() => producer.send("k", utf8("torn by the full disk, never to be read")));
    // The follower looks at the half frame meanwhile, and waits for the rest of it.
    const waiting = consumer.next();
    await new Promise((resolve) => setTimeout(resolve, 100));

    full.on = false;
    await producer.send("k", utf8("two"));
    await producer.send("k", utf8("three"));
    const read = [await waiting, await consumer.next()].map((m) => text(m!.payload));
    expect(read).toEqual(["two", "three"]);
    consumer.close();
    producer.close();
  });
});
