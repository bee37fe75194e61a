import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { HeaderMap, readRetryCount } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import {
  type DecodedMessage,
  decodeEnvelope,
  decodeFile,
  encodeEnvelope,
  isEndOfStream,
} from "../src/formatEntry.js";
import { FileBroker, type FileDelivery, FileStream, PRIME_STREAM_KEY } from "../src/index.js";
import { committedDeliveries, fixture, fixturePath, type RustDelivery } from "./helpers.js";
import { tempDir } from "./tempDir.js";

// broker-envelopes.ss was written by RustStream's own file broker (ruststream-sea-file 0.7.1): a
// service publishing the messages below, then a job its handler always retries, which the runtime
// copies back into the file twice and then dead-letters. What the service published is written out
// here from tooling/interop/src/broker.rs, so these tests hold our reading against the original's
// writing; fixtures-expected/broker-envelopes.deliveries.jsonl is the original's own reading.

type Form = "rs1:" | "rs2:" | "verbatim";

interface Published {
  readonly stream: string;
  readonly seq: bigint;
  readonly payload: Uint8Array;
  /** In the order the envelope carries them; RustStream's map lowercases names. */
  readonly headers: readonly (readonly [string, Uint8Array])[];
  readonly form: Form;
}

const bytes = (...values: number[]) => new Uint8Array(values);
const utf8 = (text: string) => new Uint8Array(Buffer.from(text, "utf8"));

function published(
  stream: string,
  seq: number,
  payload: Uint8Array,
  form: Form,
  headers: Record<string, Uint8Array | string> = {},
): Published {
  const list = Object.entries(headers).map(
    ([name, value]) => [name, typeof value === "string" ? utf8(value) : value] as const,
  );
  return { stream, seq: BigInt(seq), payload, headers: list, form };
}

const job = { "content-type": "application/json", "partition-key": "job-7", "x-tenant-id": "acme" };

const PUBLISHED: readonly Published[] = [
  published("orders", 1, utf8('{"order":1,"sku":"A-1"}'), "rs1:", {
    "content-type": "application/json",
    "partition-key": "A-1",
    "correlation-id": "6f1c2a90-order-1",
    "message-id": "m-1",
    "reply-to": "receipts",
  }),
  published("orders", 2, utf8('{"order":2,"sku":"B-2"}'), "rs1:", {
    "x-tenant-id": "acme", // published as X-Tenant-Id
    "x-url": "http://example.com:8080/a b",
    "x-colon-space": "key: value",
    "x-empty": "",
    "x-unicode": "naïve ☕ ü",
    "partition-key": "B-2",
  }),
  published(
    "events",
    1,
    new Uint8Array(256).map((_, i) => i),
    "rs2:",
    {
      "content-type": "application/octet-stream",
      "x-binary": bytes(0x00, 0x80, 0x0d, 0x0a, 0xfe, 0xff, 0xc3),
      "partition-key": bytes(0xff, 0x00, 0x41),
    },
  ),
  published("events", 2, utf8("text payload"), "rs2:", {
    "x-padded": " padded\t",
    "x-multi-line": "first\nsecond",
    "x-carriage-return": "value\r",
    "x-name:colon": "value",
    "x-plain": "plain",
  }),
  published("events", 3, utf8("nel"), "rs2:", { "x-next-line": "ends with NEL\u0085" }),
  published("events", 4, utf8("bom"), "rs1:", { "x-bom": "\ufeffstarts with BOM" }),
  published("raw", 1, utf8("plain text payload"), "verbatim"),
  published("raw", 2, bytes(0x00, 0x9f, 0x92, 0x96, 0xff), "verbatim"),
  published("raw", 3, utf8("rs1:AAAAAA=="), "rs1:"),
  published("raw", 4, utf8("rs2:AAAAAA=="), "rs1:"),
  published("raw", 5, new Uint8Array(0), "rs1:", { "x-empty-payload": "yes" }),
  published("big", 1, utf8("0123456789abcdef".repeat(94).slice(0, 1500)), "rs1:", {
    "content-type": "text/plain",
    "partition-key": "big-1",
  }),
  published("edge", 1, utf8("nameless"), "rs1:", { "": "no name", "x-after": "kept" }),
  published("jobs", 1, utf8('{"job":7}'), "rs1:", job),
  // The runtime's retry copies: the headers the handler saw (so the delivery's stream-sequence,
  // now stale) and the retry count, appended under the same key.
  published("jobs", 2, utf8('{"job":7}'), "rs1:", {
    ...job,
    "stream-sequence": "1",
    "x-ruststream-retry-count": "1",
  }),
  published("jobs", 3, utf8('{"job":7}'), "rs1:", {
    ...job,
    "stream-sequence": "2",
    "x-ruststream-retry-count": "2",
  }),
  // At the cap of three attempts, the same copy goes to the dead-letter key instead.
  published("jobs.dead", 1, utf8('{"job":7}'), "rs1:", {
    ...job,
    "stream-sequence": "3",
    "x-ruststream-retry-count": "3",
  }),
];

/**
 * The one message our reading differs on: a header with an empty name, which RustStream's map
 * holds and ours refuses (HeaderMap: "a header name cannot be empty"). See the last test.
 */
const EMPTY_NAME = PUBLISHED.find((p) => p.stream === "edge")!;
const AGREED = PUBLISHED.filter((p) => p !== EMPTY_NAME);

const dir = tempDir("ruststream-file-broker-envelopes-");
let copies = 0;

const file = decodeFile(fixture("broker-envelopes"));
const userFrames = file.messages.filter(
  (m) => m.streamKey !== PRIME_STREAM_KEY && !isEndOfStream(m),
);
const frameOf = (p: Published): DecodedMessage => {
  const frame = userFrames.find((m) => m.streamKey === p.stream && m.seq === p.seq);
  if (frame === undefined) throw new Error(`no frame ${p.stream}/${p.seq} in the fixture`);
  return frame;
};
/**
 * The headers a handler sees: the delivery's own stream-sequence is added, and on a copy, which
 * carries the stale one of the delivery it copied, it replaces that one where it stands.
 */
function delivered(p: Published): (readonly [string, Uint8Array])[] {
  const sequence = ["stream-sequence", utf8(String(p.seq))] as const;
  return p.headers.some(([n]) => n === "stream-sequence")
    ? p.headers.map((h) => (h[0] === "stream-sequence" ? sequence : h))
    : [...p.headers, sequence];
}
const pairs = (headers: Iterable<readonly [string, Uint8Array]>) =>
  [...headers].map(([name, value]) => [name, Buffer.from(value).toString("hex")]);
const b64 = (value: Uint8Array) => Buffer.from(value).toString("base64");

describe("broker-envelopes.ss, written by RustStream's file broker (ruststream-sea-file 0.7.1)", () => {
  it("holds the priming frame, what the service published in order, then end-of-stream", () => {
    expect(file.outcome.status).toBe("eos");
    expect(file.header?.beaconInterval).toBe(1024);
    const first = file.messages[0]!;
    expect([first.streamKey, first.seq, Buffer.from(first.payload).toString()]).toEqual([
      PRIME_STREAM_KEY,
      1n,
      "1",
    ]);
    expect(isEndOfStream(file.messages.at(-1)!)).toBe(true);
    expect(file.messages).toHaveLength(PUBLISHED.length + 2);
    expect(userFrames.map((m) => [m.streamKey, m.seq, m.shard])).toEqual(
      PUBLISHED.map((p) => [p.stream, p.seq, 0n]),
    );
    // The 1500-byte payload's envelope (2000-odd bytes of base64) is split by three beacons.
    const big = frameOf(PUBLISHED.find((p) => p.stream === "big")!);
    expect(file.beacons.filter((b) => big.offset < b.offset && b.offset < big.end)).toHaveLength(3);
  });

  it("writes each payload in the envelope form RustStream chose for it", () => {
    const formOf = (payload: Uint8Array): string => {
      const prefix = Buffer.from(payload.subarray(0, 4)).toString("latin1");
      return prefix === "rs1:" || prefix === "rs2:" ? prefix : "verbatim";
    };
    expect(PUBLISHED.map((p) => [p.stream, p.seq, formOf(frameOf(p).payload)])).toEqual(
      PUBLISHED.map((p) => [p.stream, p.seq, p.form]),
    );
    for (const p of PUBLISHED.filter((p) => p.form === "verbatim")) {
      expect(frameOf(p).payload).toEqual(p.payload);
    }
  });

  it("decodeEnvelope reads every payload and every header, byte for byte and in order", () => {
    for (const p of AGREED) {
      const { payload, headers } = decodeEnvelope(frameOf(p).payload);
      expect([p.stream, p.seq, b64(payload)]).toEqual([p.stream, p.seq, b64(p.payload)]);
      expect([p.stream, p.seq, pairs(headers)]).toEqual([p.stream, p.seq, pairs(p.headers)]);
    }
  });

  it("encodeEnvelope writes the bytes RustStream wrote for the same payload and headers", () => {
    for (const p of AGREED) {
      const ours = encodeEnvelope(p.payload, new HeaderMap(p.headers.map(([n, v]) => [n, v])));
      expect([p.stream, p.seq, b64(ours)]).toEqual([p.stream, p.seq, b64(frameOf(p).payload)]);
    }
  });

  it("FileBroker delivers every message as RustStream's broker delivers it to a handler", async () => {
    const rust = committedDeliveries();
    const ours = await deliveriesOf(PUBLISHED);
    expect(rust).toHaveLength(PUBLISHED.length);
    expect(ours).toHaveLength(PUBLISHED.length);
    const agreed = (list: readonly RustDelivery[]) =>
      list.filter((d) => d.stream !== EMPTY_NAME.stream);
    expect(agreed(ours.map(asRust))).toEqual(agreed(rust));
    for (const [i, d] of ours.entries()) {
      const p = PUBLISHED[i]!;
      if (p === EMPTY_NAME) continue; // the last test
      expect([d.name, d.seq, b64(d.payload)]).toEqual([p.stream, p.seq, b64(p.payload)]);
      expect([p.stream, p.seq, pairs(d.headers)]).toEqual([p.stream, p.seq, pairs(delivered(p))]);
      expect(d.redeliveryCount).toBeUndefined();
    }
  });

  it("reads the runtime's retry count off the copies: 0, 1, 2, then 3 on the dead letter", async () => {
    const jobs = await deliveriesOf(PUBLISHED.filter((p) => p.stream.startsWith("jobs")));
    expect(jobs.map((d) => [d.name, readRetryCount(d.headers)])).toEqual([
      ["jobs", 0],
      ["jobs", 1],
      ["jobs", 2],
      ["jobs.dead", 3],
    ]);
  });

  it("takes the partition key from the partition-key header, where RustStream's file broker reports none", async () => {
    const ours = await deliveriesOf(AGREED);
    const rust = committedDeliveries().filter((d) => d.stream !== EMPTY_NAME.stream);
    expect(rust.map((d) => d.partition_key)).toEqual(rust.map(() => null));
    expect(ours.map((d) => (d.partitionKey === undefined ? null : b64(d.partitionKey)))).toEqual(
      AGREED.map((p) => {
        const key = p.headers.find(([n]) => n === "partition-key")?.[1];
        return key === undefined ? null : b64(key);
      }),
    );
    expect(ours.filter((d) => d.partitionKey !== undefined)).toHaveLength(8);
  });

  it("known difference: a header with an empty name, which RustStream reads and we leave out, the payload and the other headers intact", async () => {
    const rust = committedDeliveries().find((d) => d.stream === EMPTY_NAME.stream)!;
    expect(rust.headers).toEqual([
      ["", b64(utf8("no name"))],
      ["x-after", b64(utf8("kept"))],
      ["stream-sequence", b64(utf8("1"))],
    ]);
    expect(rust.payload).toBe(b64(EMPTY_NAME.payload));
    expect(Buffer.from(frameOf(EMPTY_NAME).payload).toString("latin1")).toMatch(/^rs1:/);
    // Our HeaderMap has no empty names: that one header is left out, the envelope still opened.
    const [ours] = await deliveriesOf([EMPTY_NAME]);
    expect(b64(ours!.payload)).toBe(b64(EMPTY_NAME.payload));
    expect(pairs(ours!.headers)).toEqual(
      pairs([
        ["x-after", utf8("kept")],
        ["stream-sequence", utf8("1")],
      ]),
    );
    const { payload, headers } = decodeEnvelope(frameOf(EMPTY_NAME).payload);
    expect(b64(payload)).toBe(b64(EMPTY_NAME.payload));
    expect(pairs(headers)).toEqual(pairs([["x-after", utf8("kept")]]));
  });
});

/** Replays each stream key of `of` through FileBroker, on a copy of the fixture. */
async function deliveriesOf(of: readonly Published[]): Promise<FileDelivery[]> {
  const path = join(dir, `read-${++copies}.ss`);
  copyFileSync(fixturePath("broker-envelopes"), path);
  const broker = await new FileBroker({ path, existingOnly: true }).connect();
  const wanted = new Set(of.map((p) => `${p.stream}/${p.seq}`));
  const keys = [...new Set(of.map((p) => p.stream))];
  const out: FileDelivery[] = [];
  try {
    for (const key of keys) {
      const subscription = await broker.subscribe(
        new FileStream(key, { start: "beginning", replay: true }),
      );
      for await (const delivery of subscription) {
        if (wanted.has(`${key}/${delivery.seq}`)) out.push(delivery);
      }
    }
  } finally {
    await broker.shutdown();
  }
  return out;
}

function asRust(d: FileDelivery): RustDelivery {
  return {
    stream: d.name,
    payload: b64(d.payload),
    headers: [...d.headers].map(([name, value]) => [name, b64(value)] as const),
    // RustStream's file broker reports none; ours is compared with the header in its own test.
    partition_key: null,
    redelivery_count: d.redeliveryCount ?? null,
  };
}
