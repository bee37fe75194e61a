import { readFileSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { isRustStreamError } from "@ruststream/core";
import { within } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { decodeFile, FileConsumer, FileProducer, fileErrorDetail } from "../src/formatEntry.js";
import { FileBroker, FileStream } from "../src/index.js";
import { rejection } from "./caught.js";
import { tempDir, text, utf8 } from "./tempDir.js";

// A stream file cut under a live reader, below messages it had read: not what any writer of this
// package does (a reopening writer cuts only a torn tail), so something else removed messages.
// The reader must say so, not wait for ever at a place that is no longer a frame boundary, and not
// read on as if nothing happened.

const dir = tempDir("ruststream-file-truncated-");
let n = 0;
const fresh = () => join(dir, `t${++n}.ss`);

/** A file of `m1`..`m3` on key `k`; answers where `m2` starts and ends. */
async function threeMessages(path: string): Promise<{ offset: number; end: number }> {
  const p = FileProducer.open(path);
  for (const m of ["m1", "m2", "m3"]) await p.send("k", utf8(m));
  await p.flush();
  p.close();
  const m2 = decodeFile(new Uint8Array(readFileSync(path))).messages.find(
    (m) => text(m.payload) === "m2",
  )!;
  return { offset: m2.offset, end: m2.end };
}

describe("a stream file truncated under a live reader", () => {
  it("a follower that read past the cut fails once with FILE_TRUNCATED instead of waiting there", async () => {
    const path = fresh();
    const m2 = await threeMessages(path);
    const c = await FileConsumer.open(path, { follow: true, streamKey: "k", pollMs: 20 });
    for (const m of ["m1", "m2", "m3"]) expect(text((await c.next())!.payload)).toBe(m);
    const waiting = c.next();
    // Inside m2: what is left ends mid-frame, below m2 and m3, which the reader has handed out.
    const cut = m2.offset + 5;
    truncateSync(path, cut);
    const error = await rejection(() => within(4_000, "the truncation noticed", waiting));
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(fileErrorDetail(error)).toMatchObject({ code: "FILE_TRUNCATED", offset: cut });
    expect(String(error)).toContain("truncated under this reader");
    // Once: it is over, it does not read on from the cut.
    expect(await c.next()).toBeUndefined();
    c.close();
  });

  it("a named consumer's subscription fails with FILE_TRUNCATED, so the service stops loudly", async () => {
    const path = fresh();
    const connected = await new FileBroker({ path, consumer: "billing" }).connect();
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    for (const m of ["m1", "m2", "m3"]) await publisher.publish({ name: "k", payload: utf8(m) });
    const sub = await connected.subscribe(
      new FileStream("k", { consumer: "billing", start: "beginning" }),
    );
    const read: string[] = [];
    while (read.length < 3) {
      for (const d of await sub.nextBatch(10)) {
        read.push(text(d.payload));
        await d.ack();
      }
    }
    expect(read).toEqual(["m1", "m2", "m3"]);
    const m1 = decodeFile(new Uint8Array(readFileSync(path))).messages.find(
      (m) => text(m.payload) === "m1",
    )!;
    const waiting = sub.nextBatch(10);
    truncateSync(path, m1.end);
    const error = await rejection(() => within(4_000, "the truncation noticed", waiting));
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(fileErrorDetail(error)?.code).toBe("FILE_TRUNCATED");
    await connected.shutdown();
  });

  it("a named consumer restarted on a cut file resumes after its last message: what is appended next is delivered", async () => {
    const path = fresh();
    const stream = () => new FileStream("k", { consumer: "billing", start: "beginning" });
    const first = await new FileBroker({ path }).connect();
    const publisher = await first.defaultPublishPolicy().pair(first);
    for (const m of ["m1", "m2", "m3"]) await publisher.publish({ name: "k", payload: utf8(m) });
    const sub = await first.subscribe(stream());
    let settled = 0;
    while (settled < 3) {
      for (const d of await sub.nextBatch(10)) {
        await d.ack();
        settled++;
      }
    }
    await first.shutdown();
    // Cut after m1: m2 and m3, settled, are gone; the writer goes on at sequence 2. (A writer that
    // appended past the stored position before the consumer opened again cannot be told apart
    // from one that did not cut: the README's "Not done yet".)
    const m1 = decodeFile(new Uint8Array(readFileSync(path))).messages.find(
      (m) => text(m.payload) === "m1",
    )!;
    truncateSync(path, m1.end);
    // Started again (as a supervisor does) before the writer appends anew.
    const second = await new FileBroker({ path }).connect();
    const resumed = await second.subscribe(stream());
    const again = await second.defaultPublishPolicy().pair(second);
    for (const m of ["new2", "new3"]) await again.publish({ name: "k", payload: utf8(m) });
    const read: string[] = [];
    while (read.length < 2) {
      const batch = await within(
        4_000,
        "the messages appended after the cut",
        resumed.nextBatch(10),
      );
      for (const d of batch) {
        read.push(text(d.payload));
        await d.ack();
      }
    }
    expect(read).toEqual(["new2", "new3"]);
    await second.shutdown();
  });
});
