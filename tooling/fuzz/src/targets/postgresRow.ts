import { HeaderMap, headerNames, isRustStreamError } from "@ruststream/core";
import { deadLetterHeaderNames } from "@ruststream/core/broker";
import fc, { type Arbitrary } from "fast-check";
// The PostgreSQL package's row reading is internal (no entry point exports it): its source is
// fuzzed as a claim runs it, on rows as the drivers decode them.
import { claimedRow } from "../../../../packages/postgres/src/client/sqlStore.js";
import type { ClaimedRow } from "../../../../packages/postgres/src/client/store.js";
import { rowOf } from "../../../../packages/postgres/src/publisher.js";
import { rowHeaders } from "../../../../packages/postgres/src/queue/queueDelivery.js";
import { fuzzTarget } from "../target.js";
import { HEADER_MAP_BYTES_PER_BYTE, headerMaps, manyNames, payloads } from "./headers.js";

// A claimed row of the queue table as the driver decoded it: `header_names text[]` and
// `header_values bytea[]` as arrays (a NULL element as null, a second dimension as nested arrays),
// bytea as bytes, int8 as text. Anyone with INSERT on the table writes rows; this package writes
// the arrays one-dimensional, paired, without NULLs. The reader throws nothing: a row whose arrays
// are not headers is delivered with its payload and no headers, marked unreadable with core's
// error (routed to the decode policy); every header of any other row arrives.

type Row = Record<string, unknown>;

interface Input {
  readonly row: Row;
  /** What the publisher was given, when the row is its own, unchanged. */
  readonly sent: HeaderMap | undefined;
}

/** What another writer's INSERT might hold in the header arrays, or a dead letter's columns. */
type Change =
  | { readonly kind: "name"; readonly at: number; readonly to: unknown }
  | { readonly kind: "value"; readonly at: number; readonly to: unknown }
  | { readonly kind: "add"; readonly name: unknown; readonly value: unknown }
  | { readonly kind: "extra-name"; readonly name: string }
  | { readonly kind: "extra-value"; readonly value: Uint8Array }
  | { readonly kind: "two-dimensions" }
  | {
      readonly kind: "dead";
      readonly source: string;
      readonly reason: string | null;
      readonly attempts: number | null;
    };

const bytes = fc.uint8Array({ maxLength: 20 }).map((b) => Buffer.from(b));
const oddName = fc.oneof(
  fc.constantFrom(
    null,
    "",
    "A",
    "a",
    "Content-Type",
    headerNames.retryCount,
    "x-ruststream-dlq-source",
  ),
  fc.string({ maxLength: 12 }),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
);
const oddValue = fc.oneof(
  bytes,
  fc.constant(null),
  fc.array(bytes, { maxLength: 2 }),
  fc.string({ maxLength: 4 }),
);

const change: Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constant("name"), at: fc.nat(), to: oddName }),
  fc.record({ kind: fc.constant("value"), at: fc.nat(), to: oddValue }),
  fc.record({ kind: fc.constant("add"), name: oddName, value: oddValue }),
  fc.record({ kind: fc.constant("extra-name"), name: fc.string({ minLength: 1, maxLength: 8 }) }),
  fc.record({ kind: fc.constant("extra-value"), value: bytes }),
  fc.record({ kind: fc.constant("two-dimensions") }),
  fc.record({
    kind: fc.constant("dead"),
    source: fc.string({ maxLength: 12 }),
    reason: fc.option(fc.string({ maxLength: 12 }), { nil: null }),
    attempts: fc.option(fc.nat(1000), { nil: null }),
  }),
);

function applyChange(row: Row, c: Change): Row {
  const names = [...(row.header_names as unknown[])];
  const values = [...(row.header_values as unknown[])];
  switch (c.kind) {
    case "name":
      if (names.length > 0) names[c.at % names.length] = c.to;
      break;
    case "value":
      if (values.length > 0) values[c.at % values.length] = c.to;
      break;
    case "add":
      names.push(c.name);
      values.push(c.value);
      break;
    case "extra-name":
      names.push(c.name);
      break;
    case "extra-value":
      values.push(c.value);
      break;
    case "two-dimensions":
      return { ...row, header_names: [names], header_values: [values] };
    case "dead":
      return { ...row, dead_source: c.source, dead_reason: c.reason, dead_attempts: c.attempts };
  }
  return { ...row, header_names: names, header_values: values };
}

/** A row as `pg` hands a claim's: what the publisher inserted, claimed once. */
function claimed(sent: HeaderMap, payload: Uint8Array, id: number): Row {
  const row = rowOf({ name: "fuzz", payload, headers: sent });
  return {
    id: String(id),
    queue: row.queue,
    payload: Buffer.from(row.payload),
    header_names: [...row.headerNames],
    header_values: row.headerValues.map((v) => Buffer.from(v)),
    partition_key: null,
    priority: row.priority,
    run_at: new Date(0),
    attempts: 1,
    dead_source: null,
    dead_reason: null,
    dead_attempts: null,
  };
}

const inputs: Arbitrary<Input> = fc
  .tuple(payloads, headerMaps, fc.array(change, { maxLength: 3 }), fc.nat())
  .map(([payload, sent, changes, id]) => {
    let row = claimed(sent, payload, id);
    for (const c of changes) row = applyChange(row, c);
    return { row, sent: changes.length === 0 ? sent : undefined };
  });

/** Whether the arrays are headers as this package writes them, checked the plain way. */
function pairs(row: Row): [string, Uint8Array][] | undefined {
  const names = row.header_names;
  const values = row.header_values;
  if (!Array.isArray(names) || !Array.isArray(values) || names.length !== values.length) {
    return undefined;
  }
  const out: [string, Uint8Array][] = [];
  for (const [i, name] of names.entries()) {
    const value: unknown = values[i];
    if (typeof name !== "string" || name === "" || !(value instanceof Uint8Array)) return undefined;
    out.push([name, value]);
  }
  return out;
}

const deadNames = new Set<string>([
  deadLetterHeaderNames.source,
  deadLetterHeaderNames.reason,
  headerNames.retryCount,
  headerNames.deadLetterRetryCount,
]);

interface Decoded {
  readonly row: ClaimedRow;
  readonly headers: HeaderMap;
}

function sizeOf(row: Row): number {
  const cells = [
    row.payload,
    ...(row.header_names as unknown[]),
    ...(row.header_values as unknown[]),
  ];
  return cells
    .flat()
    .reduce<number>(
      (n, c) => n + 16 + (typeof c === "string" || c instanceof Uint8Array ? c.length : 0),
      0,
    );
}

export const postgresRow = fuzzTarget<Input>({
  name: "postgres-row",
  decoder:
    "claimedRow and the delivery's headers, a claimed queue-table row (@ruststream/postgres)",
  inputs,
  corpus: () => [
    {
      name: "a row of 100,000 headers",
      input: {
        row: claimed(new HeaderMap(manyNames(100_000)), new Uint8Array(1), 1),
        sent: undefined,
      },
    },
    {
      name: "a NULL header name",
      input: {
        row: {
          ...claimed(new HeaderMap(), new Uint8Array(1), 2),
          header_names: [null],
          header_values: [Buffer.from([1])],
        },
        sent: undefined,
      },
    },
    {
      name: "header arrays of two dimensions",
      input: {
        row: {
          ...claimed(new HeaderMap(), new Uint8Array(1), 3),
          header_names: [
            ["a", "b"],
            ["c", "d"],
          ],
          header_values: [
            [Buffer.from([1]), Buffer.from([2])],
            [Buffer.from([3]), Buffer.from([4])],
          ],
        },
        sent: undefined,
      },
    },
    {
      name: "a dead-lettered row carrying a retry count of 400 digits",
      input: {
        row: {
          ...claimed(
            new HeaderMap({ [headerNames.retryCount]: "9".repeat(400) }),
            new Uint8Array(1),
            4,
          ),
          dead_source: "q",
          dead_reason: null,
          dead_attempts: 3,
        },
        sent: undefined,
      },
    },
  ],
  size: (input) => sizeOf(input.row),
  decode: (input): Decoded => {
    const row = claimedRow(input.row);
    return { row, headers: rowHeaders(row) };
  },
  ownError: () => false,
  byLimit: () => false,
  refused: (value) => (value as Decoded).row.unreadable !== undefined,
  check(input, { value }) {
    const { row, headers } = value as Decoded;
    if (Buffer.compare(row.payload, input.row.payload as Uint8Array) !== 0) {
      return "the payload did not arrive as the row held it";
    }
    const want = pairs(input.row);
    if (want === undefined) {
      if (!isRustStreamError(row.unreadable, "invalid-argument")) {
        return "a row whose header arrays are not headers was not marked unreadable with core's error";
      }
      const left = [...headers.keys()].filter((n) => !deadNames.has(n));
      return left.length === 0
        ? undefined
        : `an unreadable row still showed headers ${left.join(", ")}`;
    }
    if (row.unreadable !== undefined) return "a row of paired, named headers was marked unreadable";
    if (input.sent !== undefined && !headers.equals(input.sent)) {
      return "the publisher's own headers did not read back as they were given";
    }
    // Later wins for names that fold to the same one, as a header map's set does.
    const expected = new Map(
      want.map(([n, v]) => [n.replace(/[A-Z]+/g, (s) => s.toLowerCase()), v]),
    );
    const dead = input.row.dead_source !== null;
    for (const [name, bytes] of expected) {
      if (dead && deadNames.has(name)) continue;
      const held = headers.get(name);
      if (held === undefined || Buffer.compare(held, bytes) !== 0)
        return `header "${name}" was lost`;
    }
    if (dead) {
      if (headers.getString(deadLetterHeaderNames.source) !== input.row.dead_source) {
        return "a dead-lettered row's source did not arrive";
      }
      if (!/^\d+$/.test(headers.getString(headerNames.retryCount) ?? "")) {
        return "a dead-lettered row's retry count is not a count";
      }
      if (
        headers.getString(headerNames.deadLetterRetryCount) !==
        headers.getString(headerNames.retryCount)
      ) {
        return "a dead-lettered row's attempts do not start from its retry count";
      }
    }
    const extra = [...headers.keys()].filter(
      (n) => !expected.has(n) && !(dead && deadNames.has(n)),
    );
    return extra.length === 0 ? undefined : `headers no column held: ${extra.join(", ")}`;
  },
  memoryBound: (input) => HEADER_MAP_BYTES_PER_BYTE * sizeOf(input.row),
  describe: (input) =>
    JSON.stringify(input.row, function (this: Record<string, unknown>, k: string, v: unknown) {
      // The value before a Buffer's toJSON made an object of it.
      const raw = this[k];
      return raw instanceof Uint8Array ? `bytes ${Buffer.from(raw).toString("hex")}` : v;
    }).slice(0, 4000),
});
