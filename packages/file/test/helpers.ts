import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  type DecodedMessage,
  decodeFile,
  FileEncoder,
  type FileHeader,
  runningChecksumUpdate,
  type StreamMessage,
  type StreamState,
} from "../src/formatEntry.js";

/**
 * Stream files the Rust crates wrote, committed in the repository: fixtures/README.md says what
 * each holds and how `tooling/interop/regenerate-fixtures.sh` writes them again.
 */
export const FIXTURES_DIR = fileURLToPath(new URL("./fixtures/", import.meta.url));

/** The three written by sea-streamer-file, then the one RustStream's file broker wrote. */
export const FIXTURE_NAMES = ["multi-key", "beacons", "no-eos", "broker-envelopes"] as const;
export type FixtureName = (typeof FIXTURE_NAMES)[number];

export function fixturePath(name: FixtureName): string {
  return `${FIXTURES_DIR}${name}.ss`;
}

export function fixture(name: FixtureName): Uint8Array {
  return new Uint8Array(readFileSync(fixturePath(name)));
}

/** One line of the interop program's `decode` output. */
export type InteropLine =
  | { type: "header"; file_name: string; created_at: number; beacon_interval: number }
  | {
      type: "message";
      stream_key: string;
      shard: string;
      seq: string;
      timestamp: number;
      payload: string;
    }
  | { type: "end"; reason: "eos" | "eof"; offset: number };

export function parseInteropLines(text: string): InteropLine[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as InteropLine);
}

export function expectedFixture(name: FixtureName): InteropLine[] {
  const url = new URL(`./fixtures-expected/${name}.jsonl`, import.meta.url);
  return parseInteropLines(readFileSync(url, "utf8"));
}

type HeaderLine = Extract<InteropLine, { type: "header" }>;
type EndLine = Extract<InteropLine, { type: "end" }>;
type MessageLine = Extract<InteropLine, { type: "message" }>;

/** The `header` line an interop decode starts with; throws when it does not. */
export function headerLine(lines: readonly InteropLine[]): HeaderLine {
  const first = lines[0];
  if (first?.type !== "header")
    throw new Error(`expected a header line first, got ${JSON.stringify(first)}`);
  return first;
}

/** The `end` line an interop decode finishes with; throws when it does not. */
export function endLine(lines: readonly InteropLine[]): EndLine {
  const last = lines.at(-1);
  if (last?.type !== "end")
    throw new Error(`expected an end line last, got ${JSON.stringify(last)}`);
  return last;
}

export function messageLines(lines: readonly InteropLine[]): MessageLine[] {
  return lines.filter((l): l is MessageLine => l.type === "message");
}

/**
 * One message as RustStream's file broker delivers it to a handler (`ruststream-interop
 * broker-read`): byte strings in base64, headers in the order its map iterates.
 */
export interface RustDelivery {
  readonly stream: string;
  readonly payload: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly partition_key: string | null;
  readonly redelivery_count: number | null;
}

export function expectedDeliveries(text: string): RustDelivery[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as RustDelivery);
}

/** RustStream's reading of broker-envelopes.ss, as committed. */
export function committedDeliveries(): RustDelivery[] {
  const url = new URL("./fixtures-expected/broker-envelopes.deliveries.jsonl", import.meta.url);
  return expectedDeliveries(readFileSync(url, "utf8"));
}

/** Our decoded messages in the interop program's line shape, for direct comparison. */
export function toInteropLine(m: StreamMessage): InteropLine {
  return {
    type: "message",
    stream_key: m.streamKey,
    shard: m.shard.toString(),
    seq: m.seq.toString(),
    timestamp: m.timestamp,
    payload: Buffer.from(m.payload).toString("base64"),
  };
}

export function encodeAll(header: FileHeader, messages: readonly StreamMessage[]): Uint8Array {
  const { encoder, bytes } = FileEncoder.create(header);
  return Buffer.concat([bytes, ...messages.map((m) => encoder.write(m))]);
}

export function decodeClean(bytes: Uint8Array): { header: FileHeader; messages: DecodedMessage[] } {
  const d = decodeFile(bytes);
  if (d.outcome.status === "damaged") throw d.outcome.error;
  return { header: d.header!, messages: d.messages };
}

export function text(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("utf8");
}

function sameMessage(a: DecodedMessage, b: DecodedMessage): boolean {
  return (
    a.offset === b.offset &&
    a.end === b.end &&
    a.streamKey === b.streamKey &&
    a.shard === b.shard &&
    a.seq === b.seq &&
    a.timestamp === b.timestamp &&
    a.checksum === b.checksum &&
    Buffer.compare(a.payload, b.payload) === 0
  );
}

/**
 * Message-list equality without vitest's deep equality, which is far too slow for the
 * thousands of comparisons the cut and flip tests make. Returns a description of the first
 * difference, or undefined.
 */
export function diffMessages(
  actual: readonly DecodedMessage[],
  expected: readonly DecodedMessage[],
): string | undefined {
  if (actual.length !== expected.length)
    return `${actual.length} messages, expected ${expected.length}`;
  for (let i = 0; i < actual.length; i++) {
    if (!sameMessage(actual[i]!, expected[i]!)) return `message ${i} differs`;
  }
  return undefined;
}

/** Small deterministic PRNG so failures reproduce. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STREAMS = [
  { streamKey: "orders", shard: 0n },
  { streamKey: "orders", shard: 2n },
  { streamKey: "audit.log", shard: 0n },
  { streamKey: "Zeta", shard: 0n },
  { streamKey: "a-very-long-stream-key_".repeat(8), shard: 7n },
];

/** Mostly small messages on five streams, with a few payloads over `bigPayload` bytes. */
export function workload(
  seed: number,
  count: number,
  maxPayload: number,
  bigPayload = maxPayload * 4,
): StreamMessage[] {
  const rand = prng(seed);
  const seqs = new Map<string, bigint>();
  const out: StreamMessage[] = [];
  for (let i = 0; i < count; i++) {
    const s = STREAMS[Math.floor(rand() * STREAMS.length)]!;
    const id = `${s.streamKey}/${s.shard}`;
    const seq = (seqs.get(id) ?? 0n) + 1n;
    seqs.set(id, seq);
    const big = rand() < 0.05;
    const length = big
      ? bigPayload + Math.floor(rand() * maxPayload)
      : Math.floor(rand() * maxPayload);
    const payload = new Uint8Array(length).map(() => Math.floor(rand() * 256));
    out.push({ ...s, seq, timestamp: 1_700_000_000_000 + i * 3, payload });
  }
  return out;
}

/** What each stream's marker must say at a beacon: a fold over every frame that starts before it. */
export function foldBefore(
  messages: readonly DecodedMessage[],
  at: number,
): Map<string, StreamState> {
  const states = new Map<string, StreamState>();
  for (const m of messages) {
    if (m.offset >= at) break;
    const id = `${m.streamKey}/${m.shard}`;
    const s = states.get(id);
    states.set(
      id,
      s
        ? {
            seq: m.seq > s.seq ? m.seq : s.seq,
            timestamp: Math.max(s.timestamp, m.timestamp),
            runningChecksum: runningChecksumUpdate(s.runningChecksum, m.checksum),
          }
        : {
            seq: m.seq,
            timestamp: m.timestamp,
            runningChecksum: runningChecksumUpdate(0xffff, m.checksum),
          },
    );
  }
  return states;
}
