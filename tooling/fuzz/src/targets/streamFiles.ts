import {
  type DecodedMessage,
  decodeFile,
  FileEncoder,
  isEndOfStream,
} from "@ruststream/file/format";
import fc, { type Arbitrary } from "fast-check";

// Valid stream files, as the package's encoder writes them: what the file targets mutate.

const KEYS = ["a", "orders", "k-1", "SEA_STREAMER_INTERNAL_x", "z.9"];

const message = fc.record({
  key: fc.constantFrom(...KEYS),
  payload: fc.oneof(
    { weight: 4, arbitrary: fc.uint8Array({ maxLength: 200 }) },
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 200, maxLength: 1500 }) },
  ),
});

/**
 * A stream file of up to a dozen messages over a few keys, with beacons every 128, 256 or 1024
 * bytes (so frames are split by them), ended by an end-of-stream frame now and then.
 */
/** Each generated file's messages, decoded once: what a reader of it must return. */
const written = new WeakMap<Uint8Array, readonly DecodedMessage[]>();

export const streamFile: Arbitrary<Uint8Array> = fc
  .record({
    interval: fc.constantFrom(128, 256, 1024),
    messages: fc.array(message, { maxLength: 12 }),
    eos: fc.boolean(),
  })
  .map(({ interval, messages, eos }) => {
    const { encoder, bytes } = FileEncoder.create({
      fileName: "fuzz.ss",
      createdAt: 1_700_000_000_000,
      beaconInterval: interval,
    });
    const parts = [bytes];
    const seqs = new Map<string, bigint>();
    let time = 1_700_000_000_001;
    for (const m of messages) {
      const seq = (seqs.get(m.key) ?? 0n) + 1n;
      seqs.set(m.key, seq);
      parts.push(
        encoder.write({ streamKey: m.key, shard: 0n, seq, timestamp: time++, payload: m.payload }),
      );
    }
    if (eos) parts.push(encoder.end(time));
    const file = new Uint8Array(Buffer.concat(parts));
    written.set(
      file,
      decodeFile(file).messages.filter((m) => !isEndOfStream(m)),
    );
    return file;
  });

/** Where two lists of messages first differ, or undefined when they are the same. */
export function messagesDiffer(
  a: readonly DecodedMessage[],
  b: readonly DecodedMessage[],
): string | undefined {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) {
      return `message ${i}: one list ends (${a.length} and ${b.length})`;
    }
    if (
      x.offset !== y.offset ||
      x.end !== y.end ||
      x.seq !== y.seq ||
      x.streamKey !== y.streamKey ||
      Buffer.compare(x.payload, y.payload) !== 0
    ) {
      return `message ${i} differs: at ${x.offset} and at ${y.offset}`;
    }
  }
  return undefined;
}

/**
 * The messages of a file `streamFile` made (the end-of-stream frame is not one) that end before its
 * first changed byte: every reader must return them. Undefined for another file (the corpus's).
 */
export function intactBefore(file: Uint8Array, firstChange: number): DecodedMessage[] | undefined {
  return written.get(file)?.filter((m) => m.end <= firstChange);
}
