import {
  closeSync,
  copyFileSync,
  openSync,
  readFileSync,
  statSync,
  truncateSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { isRustStreamError } from "@ruststream/core";
import { within } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { decodeFile, FileConsumer, FileProducer, fileErrorDetail } from "../src/formatEntry.js";
import { FileBroker } from "../src/index.js";
import { rejection } from "./caught.js";
import { tempDir, text, utf8 } from "./tempDir.js";

// What a reader does when the file changes under it in ways other than an append: a writer that
// reopened a torn file cuts the tail it had read, or rewrites it in place; and what a connection does
// when it shuts down while a subscribe is still opening.

const dir = tempDir("ruststream-file-recovery-");
let n = 0;
const fresh = () => join(dir, `r${++n}.ss`);

/**
 * A file of `m1`..`m3` on key `k` and a fourth frame (`torn`) missing its last 3 bytes, as a writer
 * killed mid-write leaves it; answers where the last complete frame ends.
 */
async function tornFile(path: string, torn: Uint8Array): Promise<number> {
  const p = FileProducer.open(path);
  for (const m of ["m1", "m2", "m3"]) await p.send("k", utf8(m));
  await p.send("k", torn);
  await p.flush();
  p.close();
  const messages = decodeFile(new Uint8Array(readFileSync(path))).messages;
  const complete = messages.find((m) => text(m.payload) === "m3")!.end;
  truncateSync(path, statSync(path).size - 3);
  return complete;
}

/** A follower of `path` from the beginning, after it has handed out `m1`..`m3` (and so read the tear). */
async function followerPast(path: string): Promise<FileConsumer> {
  const c = await FileConsumer.open(path, { follow: true, streamKey: "k", pollMs: 20 });
  for (const m of ["m1", "m2", "m3"]) expect(text((await c.next())!.payload)).toBe(m);
  return c;
}

describe("a follower whose file's tail changes under it", () => {
  it("the tail it read is cut shorter by a reopening writer: it reads again from the cut", async () => {
    const path = fresh();
    // A long torn frame and a short one written over it: the file ends before where the reader was.
    await tornFile(path, new Uint8Array(3000).fill(0x61));
    const c = await followerPast(path);
    const readTo = statSync(path).size;
    const waiting = c.next();
    const q = FileProducer.open(path);
    await q.send("k", utf8("after"));
    await q.flush();
    q.close();
    expect(statSync(path).size).toBeLessThan(readTo);
    const after = await within(10_000, "the message written after the cut", waiting);
    expect(text(after!.payload)).toBe("after");
    c.close();
  });

  it("the tail it read is rewritten in place, longer: it drops what it read and reads again once", async () => {
    const path = fresh();
    const complete = await tornFile(path, new Uint8Array(100).fill(0x61));
    const c = await followerPast(path);
    // What a reopening writer writes there, made on a copy: the cut, then one longer frame.
    const copy = `${path}.copy.ss`;
    copyFileSync(path, copy);
    const q = FileProducer.open(copy);
    await q.send("k", new Uint8Array(400));
    await q.flush();
    q.close();
    const tail = readFileSync(copy).subarray(complete);
    const waiting = c.next();
    // Written over the torn bytes without a truncation first: the file only grows, so the reader
    // sees bytes that no longer continue what it holds.
    const fd = openSync(path, "r+");
    writeSync(fd, tail, 0, tail.length, complete);
    closeSync(fd);
    const after = await within(10_000, "the rewritten frame", waiting);
    expect(after!.payload).toEqual(new Uint8Array(400));
    c.close();
  });

  it("damage that is still there when read again is reported, not read for ever", async () => {
    const path = fresh();
    const p = FileProducer.open(path);
    for (const m of ["m1", "m2", "m3"]) await p.send("k", utf8(m));
    await p.flush();
    p.close();
    const bytes = new Uint8Array(readFileSync(path));
    const m2 = decodeFile(bytes).messages.find((m) => text(m.payload) === "m2")!;
    const fd = openSync(path, "r+");
    writeSync(fd, new Uint8Array([bytes[m2.end - 4]! ^ 0xff]), 0, 1, m2.end - 4);
    closeSync(fd);
    const c = await FileConsumer.open(path, { follow: true, streamKey: "k", pollMs: 20 });
    expect(text((await c.next())!.payload)).toBe("m1");
    const damage = await rejection(() => within(10_000, "the damage", c.next()));
    expect(isRustStreamError(damage, "broker-failure")).toBe(true);
    expect(fileErrorDetail(damage)).toMatchObject({ code: "FILE_CORRUPT", offset: m2.offset });
    c.close();
  });
});

describe("a shutdown while subscribing", () => {
  it("the subscribe rejects with closed and frees its consumer name", async () => {
    const path = fresh();
    const connected = await new FileBroker({ path, consumer: "billing" }).connect();
    const subscribing = connected.subscribe("orders");
    const closed = await connected.shutdown();
    await expect(subscribing).rejects.toSatisfy((e: unknown) => isRustStreamError(e, "closed"));
    expect(closed.closedSubscriptions).toBe(0);
    // A consumer name is held by one subscription per process: the refused one holds nothing.
    const again = await new FileBroker({ path, consumer: "billing" }).connect();
    const sub = await again.subscribe("orders");
    expect(sub.name).toBe("orders");
    await again.shutdown();
  });
});

describe("a shutdown with deliveries out", () => {
  it("revokes a waiting pull, and hands back what a named consumer left unsettled", async () => {
    const path = fresh();
    const connected = await new FileBroker({ path, consumer: "billing" }).connect();
    const orders = await connected.subscribe("orders");
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    for (const m of ["m1", "m2", "m3", "m4"])
      await publisher.publish({ name: "orders", payload: utf8(m) });
    const taken = await orders.nextBatch(4);
    expect(taken.map((d) => text(d.payload))).toEqual(["m1", "m2", "m3", "m4"]);
    expect(await taken[0]!.ack()).toBe("ok");
    expect(await taken[1]!.nack({ requeue: true })).toBe("ok");
    // m2 comes back ahead of newer ones; requeued once more and taken again, it is left out
    // unsettled with m3 and m4, while the next pull waits for an append.
    const again = await orders.nextBatch(1);
    expect(again.map((d) => text(d.payload))).toEqual(["m2"]);
    expect(await again[0]!.nack({ requeue: true })).toBe("ok");
    expect(text(((await orders.next()).value as { payload: Uint8Array }).payload)).toBe("m2");
    const waiting = rejection(() => orders.next());
    const closed = await connected.shutdown();
    expect(isRustStreamError(await waiting, "closed")).toBe(true);
    expect(closed.closedSubscriptions).toBe(1);
    expect(closed.returnedDeliveries).toBe(3);
    // The next subscription under the name gets exactly those three.
    const next = await new FileBroker({ path, consumer: "billing" }).connect();
    const resumed = await next.subscribe("orders");
    const back = await resumed.nextBatch(3);
    expect(back.map((d) => text(d.payload))).toEqual(["m2", "m3", "m4"]);
    expect((await next.shutdown()).returnedDeliveries).toBe(3);
  });

  it("hands back nothing for an unnamed consumer, which keeps no position", async () => {
    const path = fresh();
    const connected = await new FileBroker({ path }).connect();
    const live = await connected.subscribe("orders");
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: "orders", payload: utf8("m1") });
    expect(text(((await live.next()).value as { payload: Uint8Array }).payload)).toBe("m1");
    const closed = await connected.shutdown();
    expect(closed).toMatchObject({ closedSubscriptions: 1, returnedDeliveries: 0 });
  });
});
