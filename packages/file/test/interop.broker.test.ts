import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  bytes as bytesCodec,
  type HandlerContext,
  HeaderMap,
  RustStream,
  readDeadLetterOrigin,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import {
  interopSuite,
  killRustServices,
  type RustDelivery,
  RustService,
} from "@ruststream/tooling-interop";
import { afterEach, expect, it } from "vitest";
import { decodeEnvelope, decodeFile, FileProducer } from "../src/formatEntry.js";
import { FileBroker, FilePublish, FileStream } from "../src/index.js";
import { tempDir, text, utf8 } from "./tempDir.js";

// One stream file, a TypeScript service and a RustStream service (ruststream-sea-file 0.7.1, through
// tooling/interop's `serve`) on it. sea-streamer-file knows one writer per file and RustStream's
// broker opens it on connect, so the two take turns: one writes and stops, the other reads (and
// writes) after it.

const dir = tempDir("ruststream-file-interop-broker-");
let files = 0;
const newPath = () => join(dir, `shared-${++files}.ss`);
let t: TestApp | undefined;

afterEach(async () => {
  await t?.stop();
  t = undefined;
  await killRustServices();
});

async function eventually(what: string, condition: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const hex = (value: Uint8Array | string) =>
  Buffer.from(typeof value === "string" ? utf8(value) : value).toString("hex");
const sorted = (headers: Iterable<readonly [string, Uint8Array | string]>) =>
  [...headers]
    .map(([n, v]) => [n, hex(v)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

type Header = [string, Uint8Array | string];
/** What each side publishes: an `rs1:` envelope, an `rs2:` one (binary values), none at all. */
const messages: { payload: Uint8Array; headers: Header[] }[] = [
  {
    payload: utf8('{"order":1,"sku":"A-1"}'),
    headers: [
      ["content-type", "application/json"],
      ["X-Tenant-Id", "acme"],
      ["partition-key", "A-1"],
      ["x-ruststream-retry-count", "2"],
      ["x-url", "http://example.com:8080/a b"],
      ["x-empty", ""],
    ],
  },
  {
    payload: Uint8Array.from({ length: 256 }, (_, i) => i),
    headers: [
      ["content-type", "application/octet-stream"],
      ["partition-key", Uint8Array.of(0xff, 0x00, 0x41)],
      ["x-binary", Uint8Array.of(0x00, 0x80, 0x0d, 0x0a, 0xfe, 0xff)],
      ["x-padded", " padded\t"],
    ],
  },
  { payload: utf8("plain"), headers: [] },
];
const headerOf = (m: (typeof messages)[number], name: string) =>
  m.headers.find(([n]) => n === name)?.[1];
/** What a reader sees: the names lowercased, and the delivery's stream-sequence added. */
const delivered = (m: (typeof messages)[number], seq: number) =>
  sorted([
    ...m.headers.map(([n, v]) => [n.toLowerCase(), v] as Header),
    ["stream-sequence", String(seq)],
  ]);

interface Seen {
  readonly payload: Uint8Array;
  readonly headers: HeaderMap;
  readonly partitionKey: Uint8Array | undefined;
  readonly attempt: number;
}

/** A TypeScript service reading `key` of the file as a named consumer, raw. */
async function tsReader(path: string, key: string): Promise<Seen[]> {
  const seen: Seen[] = [];
  const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
    new FileBroker({ path }),
    (b) => {
      b.subscriber(new FileStream(key, { consumer: "ts-reader", start: "beginning" }), {
        codec: bytesCodec,
      }).handle((payload: Uint8Array, ctx: HandlerContext) => {
        seen.push({
          payload: payload.slice(),
          headers: ctx.headers.clone(),
          partitionKey: ctx.delivery.partitionKey?.slice(),
          attempt: ctx.attempt,
        });
      });
    },
  );
  t = await TestApp.startLive(app);
  return seen;
}

async function tsPublish(
  path: string,
  ...out: { name: string; payload: Uint8Array; headers?: HeaderMap }[]
): Promise<void> {
  const broker = await new FileBroker({ path }).connect();
  const publisher = await new FilePublish().pair(broker);
  for (const m of out) await publisher.publish(m);
  await broker.shutdown();
}

const asSeen = (s: Seen) => ({
  payload: hex(s.payload),
  headers: sorted(s.headers),
  partitionKey: s.partitionKey === undefined ? null : hex(s.partitionKey),
  attempt: s.attempt,
  contentType: s.headers.getString("content-type") ?? null,
});
const asRustSaw = (d: RustDelivery) => ({
  payload: hex(d.payload),
  headers: sorted(d.headers),
  partitionKey: d.partitionKey === null ? null : hex(d.partitionKey),
  retryCount: d.retryCount,
  attempt: d.attempt,
  contentType: d.contentType,
});

interopSuite(
  "RustStream and TypeScript services on one stream file",
  () => {
    it("a file RustStream's broker wrote with headers reads in ours byte for byte, and our named consumer resumes after what it settled when Rust appends more", async () => {
      const path = newPath();
      const writer = await RustService.start({ transport: "file", path });
      await writer.publish(
        ...messages.map((m) => ({ key: "orders", ...m })),
        // A header with an empty name, which RustStream's map holds and ours leaves out.
        {
          key: "orders",
          payload: utf8("nameless"),
          headers: [
            ["", "no name"],
            ["x-after", "kept"],
          ],
        },
      );
      expect(await writer.exit()).toBe(0);

      const seen = await tsReader(path, "orders");
      await eventually("four deliveries", () => seen.length === 4);
      expect(seen.map(asSeen)).toEqual([
        ...messages.map((m, i) => ({
          payload: hex(m.payload),
          headers: delivered(m, i + 1),
          // Ours reads the partition-key header RustStream's file broker writes no key of its own to.
          partitionKey:
            headerOf(m, "partition-key") === undefined ? null : hex(headerOf(m, "partition-key")!),
          // The file counts no deliveries: the retry-count header plus this one.
          attempt: m === messages[0] ? 3 : 1,
          contentType: (headerOf(m, "content-type") as string | undefined) ?? null,
        })),
        {
          payload: hex("nameless"),
          headers: sorted([
            ["x-after", "kept"],
            ["stream-sequence", "4"],
          ]),
          partitionKey: null,
          attempt: 1,
          contentType: null,
        },
      ]);
      await t!.stop();
      t = undefined;

      const more = await RustService.start({ transport: "file", path });
      await more.publish(
        { key: "orders", payload: utf8("five") },
        { key: "orders", payload: utf8("six") },
      );
      expect(await more.exit()).toBe(0);
      const resumed = await tsReader(path, "orders");
      await eventually("the two appended", () => resumed.length === 2);
      await t!.settle();
      expect(resumed.map((s) => [text(s.payload), s.headers.getString("stream-sequence")])).toEqual(
        [
          ["five", "5"],
          ["six", "6"],
        ],
      );
    });

    it("a file ours wrote reads in RustStream's broker byte for byte, and a Rust service resumes at the sequence after the last it saw", async () => {
      const path = newPath();
      await tsPublish(
        path,
        ...messages.map((m) => ({
          name: "orders",
          payload: m.payload,
          headers: new HeaderMap(m.headers),
        })),
      );
      const reader = await RustService.start({
        transport: "file",
        path,
        consume: { key: "orders", replay: true },
      });
      await reader.waitForDeliveries(messages.length);
      expect(reader.deliveries.map(asRustSaw)).toEqual(
        messages.map((m, i) => ({
          payload: hex(m.payload),
          headers: delivered(m, i + 1),
          // RustStream's file broker reports no partition key, whatever the headers hold.
          partitionKey: null,
          retryCount: m === messages[0] ? 2 : 0,
          attempt: m === messages[0] ? 3 : 1,
          contentType: (headerOf(m, "content-type") as string | undefined) ?? null,
        })),
      );
      const last = reader.deliveries.at(-1)!.headers.find(([n]) => n === "stream-sequence")![1];
      expect(await reader.exit()).toBe(0);

      await tsPublish(
        path,
        { name: "orders", payload: utf8("four") },
        { name: "orders", payload: utf8("five") },
      );
      const resumed = await RustService.start({
        transport: "file",
        path,
        consume: { key: "orders", start_at: Number(last.toString()) + 1 },
      });
      await resumed.waitForDeliveries(2);
      expect(resumed.deliveries.map((d) => text(d.payload))).toEqual(["four", "five"]);
    });

    it("what RustStream writes and a TypeScript JSON subscriber cannot decode goes to its dead letter in the file, and it reads on", async () => {
      const path = newPath();
      const writer = await RustService.start({ transport: "file", path });
      await writer.publish(
        { key: "jobs", payload: utf8("not json"), headers: [["content-type", "text/plain"]] },
        { key: "jobs", payload: utf8('{"ok":1}') },
      );
      expect(await writer.exit()).toBe(0);
      const handled: unknown[] = [];
      const app = new RustStream({ name: "interop-ts", version: "1.0.0" }).broker(
        new FileBroker({ path }),
        (b) => {
          b.subscriber(new FileStream("jobs", { consumer: "ts-json", start: "beginning" }))
            .deadLetter("jobs.dlq")
            .handle((message) => {
              handled.push(message);
            });
        },
      );
      t = await TestApp.startLive(app);
      await eventually("the good one handled", () => handled.length === 1);
      await eventually("both settled", () => t!.subscriber("jobs").outcomes.length === 2);
      await t.stop();
      t = undefined;
      expect(handled).toEqual([{ ok: 1 }]);
      const dead = decodeFile(readFileSync(path))
        .messages.filter((m) => m.streamKey === "jobs.dlq")
        .map((m) => decodeEnvelope(m.payload));
      expect(dead).toHaveLength(1);
      expect(text(dead[0]!.payload)).toBe("not json");
      expect(dead[0]!.headers.getString("content-type")).toBe("text/plain");
      expect(readDeadLetterOrigin(dead[0]!.headers)).toMatchObject({
        source: "jobs",
        reason: "decode",
      });
    });

    it("what ours writes and a Rust JSON subscriber cannot decode is dropped by RustStream's decode policy, and it reads on", async () => {
      const path = newPath();
      await tsPublish(
        path,
        { name: "jobs", payload: utf8("not json") },
        { name: "jobs", payload: utf8('{"ok":1}') },
      );
      const reader = await RustService.start({
        transport: "file",
        path,
        consume: { key: "jobs", replay: true, codec: "json" },
      });
      await reader.waitForDeliveries(1);
      expect(reader.decodeFailures.map((p) => p.toString())).toEqual(["not json"]);
      expect(reader.deliveries.map((d) => text(d.payload))).toEqual(['{"ok":1}']);
      expect(await reader.exit()).toBe(0);
    });

    it("envelopes neither broker writes, read the way RustStream reads them: a line without a space or a colon, padding, CRLF, bytes that are not UTF-8, a nameless header", async () => {
      const path = newPath();
      const envelope = (prefix: string, block: Uint8Array, payload: string) => {
        const body = Buffer.alloc(4 + block.length);
        body.writeUInt32BE(block.length, 0);
        body.set(block, 4);
        return utf8(prefix + Buffer.concat([body, Buffer.from(payload)]).toString("base64"));
      };
      const lines = Buffer.concat([
        Buffer.from(
          "a:b\nno colon on this line\n  Padded-Name  :  padded value  \r\nx-crlf: v\r\n",
        ),
        Buffer.from("x-bad: "),
        Buffer.of(0xff, 0xfe),
        Buffer.from("\n: nameless\nx-last:last"),
      ]);
      const framed = (pairs: [string, string][]) =>
        Buffer.concat(
          pairs.flatMap(([n, v]) => {
            const name = Buffer.from(n);
            const value = Buffer.from(v);
            const sizes = Buffer.alloc(8);
            sizes.writeUInt32BE(name.length, 0);
            sizes.writeUInt32BE(value.length, 4);
            return [sizes.subarray(0, 4), name, sizes.subarray(4), value];
          }),
        );
      const producer = FileProducer.open(path);
      await producer.send("odd", envelope("rs1:", lines, "payload one"));
      await producer.send(
        "odd",
        envelope(
          "rs2:",
          framed([
            ["", "nameless"],
            ["x-kept", "kept"],
          ]),
          "payload two",
        ),
      );
      await producer.end();

      const reader = await RustService.start({
        transport: "file",
        path,
        consume: { key: "odd", replay: true },
      });
      await reader.waitForDeliveries(2);
      expect(await reader.exit()).toBe(0);
      const broker = await new FileBroker({ path, existingOnly: true }).connect();
      const ours: { payload: string; headers: ReturnType<typeof sorted> }[] = [];
      for await (const d of await broker.subscribe(
        new FileStream("odd", { start: "beginning", replay: true }),
      )) {
        ours.push({ payload: text(d.payload), headers: sorted(d.headers) });
      }
      await broker.shutdown();
      // The same, but for the nameless header RustStream's map holds and ours cannot.
      expect(ours).toEqual(
        reader.deliveries.map((d) => ({
          payload: text(d.payload),
          headers: sorted(d.headers.filter(([n]) => n !== "")),
        })),
      );
      expect(reader.deliveries.map((d) => d.headers.filter(([n]) => n === "").length)).toEqual([
        1, 1,
      ]);
      expect(ours[0]).toEqual({
        payload: "payload one",
        headers: sorted([
          ["a", "b"],
          ["padded-name", "padded value"],
          ["x-crlf", "v"],
          ["x-bad", "\ufffd\ufffd"],
          ["x-last", "last"],
          ["stream-sequence", "1"],
        ]),
      });
    });
  },
  { timeout: 60_000 },
);
