import { HeaderMap, isRustStreamError } from "@ruststream/core";
import fc from "fast-check";
// The NATS package's header reading is internal (no entry point exports it): its source is fuzzed
// as a core and a JetStream subscription run it on every message that carries headers.
import { natsHeadersOf } from "../../../../packages/nats/src/client/natsLink.js";
import {
  parseHeaderBlock,
  type ReadHeaders,
} from "../../../../packages/nats/src/client/receivedHeaders.js";
import { encodedValuePrefix } from "../../../../packages/nats/src/headerValues.js";
import { frameOf } from "../../../../packages/nats/src/publisher.js";
import { hex, type Mutated, mutated } from "../mutate.js";
import { fuzzTarget } from "../target.js";
import { HEADER_MAP_BYTES_PER_BYTE, manyNames } from "./headers.js";

// A NATS message's header block: `NATS/1.0[ status]`, then `name: value` lines, each value one line
// of text (this package sends a value that is not one, bytes among them, base64 behind a prefix).
// Any client on the server writes these, and the server passes them on as they are. The reader
// throws only core's error (a block it cannot read, which marks the message unreadable), and every
// header of a block it reads arrives.

const te = new TextEncoder();

/** Names NATS carries: printable ASCII other than the colon. */
const name = fc.oneof(
  fc.constantFrom(
    "content-type",
    "X-Trace",
    "traceparent",
    "x-ruststream-retry-count",
    "Nats-Msg-Id",
  ),
  fc.stringMatching(/^[!-9;-~]{1,12}$/),
);

/** Text, text that needs encoding (a line break, spaces around it, the prefix), and bytes. */
const value = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(" padded ", "two\r\nlines", `${encodedValuePrefix}abc`, ""),
  fc.uint8Array({ maxLength: 40 }),
);

const sent = fc.array(fc.tuple(name, value), { maxLength: 6 }).map((pairs) => new HeaderMap(pairs));

/** The block the publisher and the client send for `headers`. */
function blockOf(headers: HeaderMap): Uint8Array {
  const frame = frameOf(
    { name: "fuzz.headers", payload: new Uint8Array(0), headers },
    1 << 20,
    false,
  );
  // As the client writes a block: its text, UTF-8 encoded.
  const lines = natsHeadersOf(frame);
  return lines === undefined ? new Uint8Array(0) : te.encode(lines.toString());
}

const blocks = sent.map(blockOf);

function block(lines: string | Uint8Array, head = "NATS/1.0"): Mutated {
  const bytes = Buffer.concat([
    te.encode(`${head}\r\n`),
    typeof lines === "string" ? te.encode(lines) : lines,
    te.encode("\r\n\r\n"),
  ]);
  return { seed: bytes, bytes, firstChange: 0 };
}

/** The headers a block holds by the protocol's rules, read the plain way, or "unreadable". */
function expected(bytes: Uint8Array): Map<string, Uint8Array> | "unreadable" {
  const headers = new Map<string, Uint8Array>();
  const [, ...lines] = new TextDecoder().decode(bytes).split("\r\n");
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon);
    const text = line.slice(colon + 1).trim();
    if (!/^[!-9;-~]+$/.test(name) || /[\r\n]/.test(text)) return "unreadable";
    const key = name.toLowerCase();
    if (headers.has(key)) continue;
    headers.set(
      key,
      text.startsWith(encodedValuePrefix)
        ? new Uint8Array(Buffer.from(text.slice(encodedValuePrefix.length), "base64"))
        : te.encode(text),
    );
  }
  return headers;
}

export const natsHeaders = fuzzTarget<Mutated>({
  name: "nats-headers",
  decoder: "parseHeaderBlock, a NATS message's header block (@ruststream/nats)",
  inputs: mutated(blocks),
  corpus: () => [
    {
      name: "a block of 100,000 headers (1 MiB, the server's default max_payload)",
      input: block(
        manyNames(100_000)
          .map(([n], i) => `${n}: ${i}`)
          .join("\r\n"),
      ),
    },
    { name: "a name with a space", input: block("bad name: v\r\nx: y") },
    { name: "a name with a non-ASCII letter", input: block("näme: v") },
    { name: "an empty name", input: block(": v") },
    { name: "a lone LF in a value", input: block("x: a\nb") },
    { name: "a status and a header", input: block("x: y", "NATS/1.0 503") },
    {
      name: "bytes that are not UTF-8",
      input: block(new Uint8Array([0x78, 0x3a, 0x20, 0xff, 0xc3])),
    },
    { name: "an encoded value that is not base64", input: block(`x: ${encodedValuePrefix}!!!`) },
  ],
  size: (input) => input.bytes.length,
  decode: (input) => parseHeaderBlock(input.bytes),
  ownError: (error) => isRustStreamError(error, "invalid-argument"),
  byLimit: () => false,
  check(input, { threw, value }) {
    const want = expected(input.bytes);
    if (want === "unreadable") {
      return threw ? undefined : "a block with a name or value NATS cannot carry was read";
    }
    if (threw) return "a block of valid names and one-line values was refused";
    const got = (value as ReadHeaders).headers;
    if (input.firstChange === input.bytes.length && input.bytes.length === input.seed.length) {
      return Buffer.compare(blockOf(got), input.bytes) === 0
        ? undefined
        : "a valid block did not read back to headers that are sent as the same bytes";
    }
    for (const [name, bytes] of want) {
      const held = got.get(name);
      if (held === undefined || Buffer.compare(held, bytes) !== 0)
        return `header "${name}" was lost`;
    }
    return got.size === want.size
      ? undefined
      : `${got.size} headers read, ${want.size} in the block`;
  },
  memoryBound: (input) => HEADER_MAP_BYTES_PER_BYTE * input.bytes.length,
  describe: (input) => `first change at ${input.firstChange}: ${hex(input.bytes)}`,
});
