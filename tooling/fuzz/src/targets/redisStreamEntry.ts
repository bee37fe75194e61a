import { type HeaderMap, isRustStreamError } from "@ruststream/core";
import fc, { type Arbitrary } from "fast-check";
// The Redis package's entry reader is internal (no entry point exports it): its source is fuzzed
// as the subscription runs it.
import {
  entryFields,
  parseEntry,
  type StreamEntry,
} from "../../../../packages/redis/src/stream/entry.js";
import { fuzzTarget } from "../target.js";
import { HEADER_MAP_BYTES_PER_BYTE, headerMaps, manyNames, payloads } from "./headers.js";

// A Redis stream entry as XREADGROUP returns it: its id and its field/value pairs, every one a bulk
// string. Anyone with XADD on the key writes these. The reader never throws: an entry without the
// payload field is marked unreadable (core's error, which the runtime routes by the decode policy),
// and no header field is lost.

type Fields = Buffer[];

interface Input {
  readonly id: Buffer;
  readonly fields: Fields;
}

const PAYLOAD = "_payload";
const PREFIX = "h:";

function asBuffer(value: string | Uint8Array | number): Buffer {
  if (typeof value === "string") return Buffer.from(value);
  if (typeof value === "number") return Buffer.from(String(value));
  return Buffer.from(value);
}

/** What another writer's XADD might hold: other names, `h:` names of any bytes, fields repeated. */
type Change =
  | { readonly kind: "drop"; readonly at: number }
  | { readonly kind: "add"; readonly name: Buffer; readonly value: Buffer }
  | { readonly kind: "repeat"; readonly at: number }
  | { readonly kind: "trailing"; readonly name: Buffer };

const fieldName = fc.oneof(
  fc
    .constantFrom(PAYLOAD, "__data__", "h:", "H:Upper", "h:x-ruststream-retry-count", "payload")
    .map((name) => Buffer.from(name)),
  fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.concat([Buffer.from(PREFIX), Buffer.from(b)])),
  fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b)),
);

const change: Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constant("drop"), at: fc.nat() }),
  fc.record({
    kind: fc.constant("add"),
    name: fieldName,
    value: fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b)),
  }),
  fc.record({ kind: fc.constant("repeat"), at: fc.nat() }),
  fc.record({ kind: fc.constant("trailing"), name: fieldName }),
);

function applyChange(fields: Fields, c: Change): Fields {
  const pairs = Math.floor(fields.length / 2);
  switch (c.kind) {
    case "drop": {
      if (pairs === 0) return fields;
      const i = (c.at % pairs) * 2;
      return [...fields.slice(0, i), ...fields.slice(i + 2)];
    }
    case "add":
      return [...fields, c.name, c.value];
    case "repeat": {
      if (pairs === 0) return fields;
      const i = (c.at % pairs) * 2;
      return [...fields, fields[i]!, fields[i + 1]!];
    }
    case "trailing":
      return [...fields, c.name];
  }
}

const entries: Arbitrary<Input> = fc
  .tuple(payloads, headerMaps, fc.array(change, { maxLength: 4 }), fc.nat(), fc.nat(9999))
  .map(([payload, headers, changes, ms, seq]) => {
    let fields = entryFields(headers, payload).map(asBuffer);
    for (const c of changes) fields = applyChange(fields, c);
    return { id: Buffer.from(`${ms}-${seq}`), fields };
  });

/** The headers and payload an entry's fields hold, by the layout's rules, read the plain way. */
function expected(fields: Fields): { payload: Buffer | undefined; headers: Map<string, Buffer> } {
  let payload: Buffer | undefined;
  const headers = new Map<string, Buffer>();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const name = fields[i]!;
    if (name.toString("latin1") === PAYLOAD) payload = fields[i + 1];
    else if (name.length > PREFIX.length && name.subarray(0, 2).toString("latin1") === PREFIX) {
      const header = name
        .subarray(2)
        .toString("utf8")
        .replace(/[A-Z]+/g, (s) => s.toLowerCase());
      headers.set(header, fields[i + 1]!);
    }
  }
  return { payload, headers };
}

export const redisStreamEntry = fuzzTarget<Input>({
  name: "redis-stream-entry",
  decoder: "parseEntry, a stream entry's fields (@ruststream/redis)",
  inputs: entries,
  corpus: () => [
    {
      name: "an entry of 100,000 header fields",
      input: {
        id: Buffer.from("1-1"),
        fields: [
          Buffer.from(PAYLOAD),
          Buffer.from("x"),
          ...manyNames(100_000).flatMap(([n, v]) => [Buffer.from(PREFIX + n), Buffer.from(v)]),
        ],
      },
    },
  ],
  size: (input) => input.fields.reduce((n, f) => n + f.length, input.id.length),
  decode: (input) => parseEntry([input.id, input.fields]),
  ownError: (error) => isRustStreamError(error),
  byLimit: () => false,
  refused: (value) => (value as StreamEntry | undefined)?.unreadable !== undefined,
  check(input, { value }) {
    const entry = value as StreamEntry | undefined;
    if (entry === undefined) return "an entry with fields was read as none";
    const want = expected(input.fields);
    if (want.payload === undefined) {
      if (!isRustStreamError(entry.unreadable, "invalid-argument")) {
        return "an entry without the payload field is not marked unreadable with core's error";
      }
    } else if (
      entry.unreadable !== undefined ||
      Buffer.compare(entry.payload, want.payload) !== 0
    ) {
      return "the payload field's value did not arrive as the payload";
    }
    const got = entry.headers as HeaderMap;
    for (const [name, bytes] of want.headers) {
      const held = got.get(name);
      if (held === undefined || Buffer.compare(held, bytes) !== 0)
        return `header "${name}" was lost`;
    }
    return got.size === want.headers.size
      ? undefined
      : `${got.size} headers read, ${want.headers.size} written`;
  },
  memoryBound: (input) =>
    HEADER_MAP_BYTES_PER_BYTE * input.fields.reduce((n, f) => n + f.length + 64, 0),
  describe: (input) =>
    `${input.id.toString()} ${input.fields.length} fields: ${input.fields
      .slice(0, 40)
      .map((f) => f.toString("hex"))
      .join(" ")}`,
});
