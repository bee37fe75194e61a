import { HeaderMap, isRustStreamError } from "@ruststream/core";
import fc, { type Arbitrary } from "fast-check";
// The RabbitMQ package's header reading is internal (no entry point exports it): its source is
// fuzzed as a queue delivery and the reply inbox run it.
import {
  headersOf,
  maxHeaderNesting,
  propertiesOf,
  type ReadHeaders,
  tableNumber,
} from "../../../../packages/rabbitmq/src/amqpHeaders.js";
import type { LinkProperties } from "../../../../packages/rabbitmq/src/link.js";
import type { TableValue } from "../../../../packages/rabbitmq/src/topology/topology.js";
import { fuzzTarget } from "../target.js";
import { HEADER_MAP_BYTES_PER_BYTE, headerMaps, manyNames } from "./headers.js";

// A message's AMQP properties as amqplib hands them over: the header table, decoded (long strings,
// byte arrays as Buffers, numbers, booleans, void as null, decimals and timestamps as amqplib's
// objects, arrays, nested tables), and the four properties that carry headers. Any client on the
// broker writes these and the server passes them on; amqplib parses the frame. The reader throws
// nothing: a header nested past the limit is left out and the delivery marked unreadable with core's
// error (routed to the decode policy); every other header arrives.

interface Input {
  readonly properties: LinkProperties;
  /** What the publisher was given, when the properties are its own, unchanged. */
  readonly sent: HeaderMap | undefined;
}

const entryName = fc.oneof(
  fc.constantFrom("", "__proto__", "Content-Type", "x-death", "x-delivery-count", "X-A", "x-a"),
  fc.string({ maxLength: 12 }),
);

/** A value as amqplib decodes one, nested a few levels. */
const { value } = fc.letrec<{ value: TableValue; leaf: TableValue }>((tie) => ({
  leaf: fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b)),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc
      .record({ places: fc.nat(255), digits: fc.nat() })
      .map((v) => ({ "!": "decimal", value: v }) as TableValue),
    fc.nat().map((v) => ({ "!": "timestamp", value: v }) as TableValue),
  ),
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    tie("leaf"),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.array(fc.tuple(entryName, tie("value")), { maxLength: 3 }).map(tableOf),
  ),
}));

/**
 * A table as amqplib builds one: each entry assigned in turn, so `__proto__` is not an entry but
 * the table's prototype. An assignment that then throws (an index entry on a table whose prototype
 * became bytes converts its value to a number) fails amqplib's decoding of the frame too: no such
 * table reaches the package, and the entry is left out here.
 */
function tableOf(entries: readonly (readonly [string, TableValue])[]): Record<string, TableValue> {
  const table: Record<string, TableValue> = {};
  for (const [name, v] of entries) {
    try {
      table[name] = v;
    } catch {
      // As above: amqplib would not have handed this table over.
    }
  }
  return table;
}

const property = fc.option(fc.string({ maxLength: 20 }), { nil: undefined });

const inputs: Arbitrary<Input> = fc
  .tuple(
    headerMaps,
    fc.array(fc.tuple(entryName, value), { maxLength: 4 }),
    fc.record({
      contentType: property,
      correlationId: property,
      replyTo: property,
      messageId: property,
    }),
    fc.boolean(),
  )
  .map(([generated, added, props, foreign]) => {
    const sent = publishable(generated);
    const own = propertiesOf(sent, "fuzz");
    // The publisher's table as amqplib decodes it: bytes come back as Buffers.
    const table = tableOf(
      Object.entries(own.headers).map(([n, v]) => [
        n,
        v instanceof Uint8Array ? Buffer.from(v) : v,
      ]),
    );
    if (!foreign && added.length === 0) return { properties: { ...own, headers: table }, sent };
    const headers = tableOf([...Object.entries(table), ...added]);
    return { properties: { ...own, ...props, headers }, sent: undefined };
  });

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const propertyNames = new Set(["content-type", "correlation-id", "reply-to", "message-id"]);

/**
 * The headers the publisher sends: one it refuses (a property of bytes not UTF-8, the name
 * `__proto__`) left out.
 */
function publishable(headers: HeaderMap): HeaderMap {
  const kept = new HeaderMap();
  for (const [name, bytes] of headers) {
    if (name === "__proto__") continue;
    if (propertyNames.has(name)) {
      try {
        strictUtf8.decode(bytes);
      } catch {
        continue;
      }
    }
    kept.set(name, bytes);
  }
  return kept;
}

/** Nesting depth, without recursion (the input may nest thousands deep). */
function depthOf(root: TableValue | undefined): number {
  let deepest = 0;
  const stack: [TableValue | undefined, number][] = [[root, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== "object" || v === null || ArrayBuffer.isView(v)) continue;
    deepest = Math.max(deepest, d + 1);
    for (const inner of Array.isArray(v) ? v : Object.values(v)) stack.push([inner, d + 1]);
  }
  return deepest;
}

/** Bytes the input holds, roughly as its frame did. */
function sizeOf(properties: LinkProperties): number {
  let bytes = 0;
  const stack: unknown[] = [properties.headers];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") bytes += v.length + 5;
    else if (ArrayBuffer.isView(v)) bytes += v.byteLength + 5;
    else if (typeof v === "object" && v !== null) {
      for (const [k, inner] of Object.entries(v)) {
        bytes += k.length + 2;
        stack.push(inner);
      }
    } else bytes += 9;
  }
  return bytes;
}

const te = new TextEncoder();

/** Whether `json`, a header's nested value parsed back, is `value` as JSON carries it. */
function carries(json: unknown, value: TableValue): boolean {
  if (typeof value === "bigint") return json === value.toString();
  if (typeof value === "number") return Number.isFinite(value) ? json === value : json === null;
  if (typeof value !== "object" || value === null) return json === value;
  if (ArrayBuffer.isView(value)) {
    return (
      json === Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64")
    );
  }
  if (Array.isArray(value)) {
    return (
      Array.isArray(json) &&
      json.length === value.length &&
      value.every((v, i) => carries(json[i], v))
    );
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return false;
  const entries = Object.entries(value);
  const held = new Map(Object.entries(json));
  return (
    entries.length === held.size &&
    entries.every(([k, v]) => held.has(k) && carries(held.get(k), v))
  );
}

/**
 * What the table and properties hold by the package's rules, read the plain way: each header's
 * bytes, or for a nested value (JSON text) the value itself.
 */
function expected(properties: LinkProperties): {
  headers: Map<string, Uint8Array | { nested: TableValue }>;
  tooDeep: boolean;
} {
  const headers = new Map<string, Uint8Array | { nested: TableValue }>();
  let tooDeep = false;
  for (const [name, v] of Object.entries(properties.headers)) {
    if (name === "" || v === null) continue;
    // Nesting counts tables and arrays: the limit's levels of them are held.
    if (depthOf(v) > maxHeaderNesting) {
      tooDeep = true;
      continue;
    }
    const key = name.replace(/[A-Z]+/g, (s) => s.toLowerCase());
    headers.set(
      key,
      typeof v === "string"
        ? te.encode(v)
        : ArrayBuffer.isView(v)
          ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
          : typeof v === "number" || typeof v === "boolean"
            ? te.encode(String(v))
            : { nested: v },
    );
  }
  for (const [property, header] of [
    ["contentType", "content-type"],
    ["correlationId", "correlation-id"],
    ["replyTo", "reply-to"],
    ["messageId", "message-id"],
  ] as const) {
    const v = properties[property];
    if (typeof v === "string") headers.set(header, te.encode(v));
  }
  return { headers, tooDeep };
}

/** A value as text for a report: own entries only (a prototype an entry set is not followed). */
function shown(v: unknown, depth: number): string {
  if (ArrayBuffer.isView(v))
    return `bytes ${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("hex")}`;
  if (typeof v !== "object" || v === null)
    return typeof v === "bigint" ? `${v}n` : String(JSON.stringify(v) ?? v);
  if (depth > 8) return `(nested ${depthOf(v as TableValue)} deeper)`;
  if (Array.isArray(v)) return `[${v.map((x) => shown(x, depth + 1)).join(", ")}]`;
  return `{${Object.entries(v)
    .map(([k, x]) => `${JSON.stringify(k)}: ${shown(x, depth + 1)}`)
    .join(", ")}}`;
}

function deep(depth: number): TableValue {
  let v: TableValue = "leaf";
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? { n: v } : [v];
  return v;
}

interface Decoded {
  readonly read: ReadHeaders;
  readonly deliveryCount: number | undefined;
}

export const rabbitmqHeaders = fuzzTarget<Input>({
  name: "rabbitmq-headers",
  decoder: "headersOf, a delivery's header table and properties (@ruststream/rabbitmq)",
  inputs,
  corpus: () => [
    {
      // amqplib decodes a table nested this deep (32 KB, under the default frame_max).
      name: "a header nested 4,500 deep",
      input: { properties: { headers: { deep: deep(4500), kept: "yes" } }, sent: undefined },
    },
    {
      // amqplib fills a table entry by entry: this entry sets the table's prototype to the bytes.
      name: "a nested table whose __proto__ entry is bytes",
      input: {
        properties: {
          headers: {
            t: tableOf([
              ["__proto__", Buffer.from("ab")],
              ["x", "1"],
            ]),
          },
        },
        sent: undefined,
      },
    },
    {
      name: "a nested table shaped like a Buffer's JSON, its data a number",
      input: { properties: { headers: { t: { type: "Buffer", data: 5 } } }, sent: undefined },
    },
    {
      name: "a table of 100,000 entries",
      input: {
        properties: { headers: tableOf(manyNames(100_000).map(([n]) => [n, "v"])) },
        sent: undefined,
      },
    },
    {
      name: "x-death as the server writes it, a quorum queue's x-delivery-count",
      input: {
        properties: {
          headers: {
            "x-delivery-count": 3,
            "x-death": [
              {
                count: 1,
                reason: "delivery_limit",
                queue: "q",
                time: { "!": "timestamp", value: 1 },
                exchange: "",
                "routing-keys": ["q"],
              },
            ],
          },
        },
        sent: undefined,
      },
    },
    {
      name: "a table entry and a property of the same header",
      input: {
        properties: { headers: { "Content-Type": "a", "content-type": "b" }, contentType: "c" },
        sent: undefined,
      },
    },
  ],
  size: (input) => sizeOf(input.properties),
  decode: (input): Decoded => ({
    read: headersOf(input.properties),
    deliveryCount: tableNumber(input.properties.headers, "x-delivery-count"),
  }),
  ownError: () => false,
  byLimit: () => false,
  refused: (value) => (value as Decoded).read.unreadable !== undefined,
  check(input, { value }) {
    const { read, deliveryCount } = value as Decoded;
    if (deliveryCount !== undefined && !Number.isSafeInteger(deliveryCount)) {
      return `x-delivery-count read as ${deliveryCount}`;
    }
    const want = expected(input.properties);
    if (want.tooDeep !== (read.unreadable !== undefined)) {
      return want.tooDeep
        ? `a header nested past ${maxHeaderNesting} levels did not mark the delivery unreadable`
        : "a delivery without a header nested past the limit was marked unreadable";
    }
    if (read.unreadable !== undefined && !isRustStreamError(read.unreadable, "invalid-argument")) {
      return "the delivery was marked unreadable with an error not core's invalid-argument";
    }
    const got = read.headers;
    if (input.sent !== undefined && !got.equals(input.sent)) {
      return "the publisher's own headers did not read back as they were given";
    }
    for (const [name, wanted] of want.headers) {
      const held = got.get(name);
      if (held === undefined) return `header "${name}" was lost`;
      if (wanted instanceof Uint8Array) {
        if (Buffer.compare(held, wanted) !== 0) return `header "${name}" arrived changed`;
        continue;
      }
      let json: unknown;
      try {
        json = JSON.parse(got.getString(name) ?? "");
      } catch {
        return `header "${name}", a nested value, is not JSON`;
      }
      if (!carries(json, wanted.nested)) return `header "${name}", a nested value, arrived changed`;
    }
    return got.size === want.headers.size
      ? undefined
      : `${got.size} headers read, ${want.headers.size} in the table and properties`;
  },
  memoryBound: (input) => HEADER_MAP_BYTES_PER_BYTE * sizeOf(input.properties),
  describe: (input) => {
    const text = `${shown(input.properties.headers, 0)} ${JSON.stringify({ ...input.properties, headers: undefined })}`;
    return text.length > 2000 ? `${text.slice(0, 2000)}... (${text.length} characters)` : text;
  },
});
