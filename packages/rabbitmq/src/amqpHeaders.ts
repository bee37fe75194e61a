import { HeaderMap, type ReadonlyHeaderMap, RustStreamError } from "@ruststream/core";
import type { LinkProperties } from "./link.js";
import { propertyHeaders, unreadableHeaders } from "./names.js";
import type { Table, TableValue } from "./topology/topology.js";

// A message's headers on AMQP: the four the framework names that AMQP has properties for
// (content-type, correlation-id, reply-to, message-id) travel as those properties, every other one
// as an entry of the header table (text as a long string, bytes as a byte array). A delivery shows
// both as one HeaderMap again, a property winning over a table entry of the same name.

/** Longer than this, a header table entry name is refused before publishing (AMQP's short string). */
const maxNameBytes = 255;

/** The properties that carry headers, as [property, header] pairs: read for every delivery. */
const propertyEntries = Object.entries(propertyHeaders) as ReadonlyArray<
  readonly [keyof typeof propertyHeaders, string]
>;

/** The properties a message's headers go out as, or the refusal. */
export function propertiesOf(
  headers: ReadonlyHeaderMap,
  destination: string,
): Pick<LinkProperties, "headers" | "contentType" | "correlationId" | "replyTo" | "messageId"> {
  const table: Record<string, TableValue> = {};
  const properties: { -readonly [K in keyof typeof propertyHeaders]?: string } = {};
  for (const [name, value] of headers.entriesAsHeld()) {
    const property = propertyOf(name);
    if (property !== undefined) {
      properties[property] =
        typeof value === "string" ? value : propertyText(value, name, destination);
      continue;
    }
    if (name === "__proto__") {
      // A table entry of this name is its table's prototype to JavaScript: it would have been lost
      // here without a word, and amqplib reads one a peer sent as the table's prototype too.
      throw new RustStreamError(
        "publish-refused",
        `a header named "__proto__" on a message for ${destination} cannot travel in an AMQP table read by JavaScript: rename it`,
      );
    }
    if (Buffer.byteLength(name) > maxNameBytes) {
      throw new RustStreamError(
        "publish-refused",
        `a header name of ${Buffer.byteLength(name)} bytes on a message for ${destination} is over AMQP's 255: shorten it`,
      );
    }
    table[name] = typeof value === "string" ? value : Buffer.from(value);
  }
  return { headers: table, ...properties };
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A property's bytes as text: amqplib writes and reads a property as UTF-8, so bytes that are not
 * would arrive as other bytes (each bad sequence a U+FFFD).
 */
function propertyText(bytes: Uint8Array, name: string, destination: string): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new RustStreamError(
      "publish-refused",
      `the header "${name}" on a message for ${destination} is not UTF-8 text: AMQP carries it as a property of text; give it as text`,
    );
  }
}

function propertyOf(name: string): keyof typeof propertyHeaders | undefined {
  for (const [property, header] of propertyEntries) if (header === name) return property;
  return undefined;
}

/**
 * How deep a header's tables and arrays may nest (`x-death`, the deepest the server writes, is 3):
 * past this its text would be made by recursion as deep as what a peer wrote, and amqplib decodes
 * tables nested a few thousand deep that then overflow the stack here.
 */
export const maxHeaderNesting = 64;

/** Why a header nested past `maxHeaderNesting` is not read, here or by the frame guard. */
export function nestingRefusal(name: string): string {
  return `the header "${name.slice(0, 64)}" nests tables or arrays more than ${maxHeaderNesting} deep: a header holds text, bytes, or a shallow table; fix the sender`;
}

/** A delivery's headers, and why one of them could not be read (it is left out), if one could not. */
export interface ReadHeaders {
  readonly headers: HeaderMap;
  readonly unreadable: RustStreamError | undefined;
}

/** A delivery's headers as a new map (a reply's, read once): `readHeaders` into a map of its own. */
export function headersOf(properties: LinkProperties): ReadHeaders {
  const headers = new HeaderMap();
  const unreadable = readHeaders(properties, headers);
  return { headers, unreadable };
}

/**
 * A delivery's headers put into `headers`: the table's entries (each as text or bytes), then the
 * properties. Answers why one of them could not be read (it is left out), if one could not. Read
 * for every delivery (the runtime reads its attempt from them), so it makes nothing but the map's
 * entries: the table's own names are walked in place, not copied out as entries.
 */
export function readHeaders(
  properties: LinkProperties,
  headers: HeaderMap,
): RustStreamError | undefined {
  let unreadable: RustStreamError | undefined;
  const table = properties.headers;
  if (Object.getPrototypeOf(table) === Object.prototype) {
    // for-in makes no array; with the plain prototype it meets only the table's own names.
    for (const name in table) unreadable = readEntry(name, table[name], headers, unreadable);
  } else {
    // A table given a prototype by an entry named `__proto__` (see below): for-in would walk the
    // prototype's names (every index of a byte array), so only its own are read.
    for (const name of Object.keys(table)) {
      unreadable = readEntry(name, table[name], headers, unreadable);
    }
  }
  for (const [property, header] of propertyEntries) {
    const value = properties[property];
    if (typeof value === "string") headers.set(header, value);
  }
  return unreadable;
}

/** One table entry into `headers`; answers the first reason an entry could not be read. */
function readEntry(
  name: string,
  value: TableValue | undefined,
  headers: HeaderMap,
  unreadable: RustStreamError | undefined,
): RustStreamError | undefined {
  if (name.length === 0) return unreadable;
  if (name === unreadableHeaders && typeof value === "string") {
    // The frame guard's mark (client/contentHeader.ts): the table as sent was not safe to read.
    return unreadable ?? new RustStreamError("invalid-argument", value);
  }
  if (!nestedWithin(value, maxHeaderNesting)) {
    return unreadable ?? new RustStreamError("invalid-argument", nestingRefusal(name));
  }
  const held = heldValue(value);
  if (held !== undefined) headers.set(name, held);
  return unreadable;
}

// A table amqplib decoded is a plain object filled entry by entry, so an entry named `__proto__`
// sets its prototype: one holding bytes makes it pass for a Uint8Array (`instanceof`) while reading
// its length throws. Bytes are told by ArrayBuffer.isView, which reads what the value is.

/** Whether `value`'s tables and arrays nest at most `levels` deep (a recursion of at most that). */
function nestedWithin(value: TableValue | undefined, levels: number): boolean {
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return true;
  if (levels === 0) return false;
  const inner = Array.isArray(value) ? value : Object.values(value);
  for (const item of inner) if (!nestedWithin(item, levels - 1)) return false;
  return true;
}

/**
 * A table value as a header: text and bytes as they are, a number or boolean as its text (a quorum
 * queue's `x-delivery-count`), anything nested (`x-death`) as JSON, bytes inside as base64.
 */
function heldValue(value: TableValue | undefined): string | Uint8Array | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  // A plain Uint8Array over the same bytes: amqplib hands Buffers, headers hold bytes.
  if (ArrayBuffer.isView(value))
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(plainValue(value));
}

/** A nested value as plain JSON data: bytes as base64, a bigint as its digits, tables' own entries. */
function plainValue(value: TableValue): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object" || value === null) return value;
  if (ArrayBuffer.isView(value)) {
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64");
  }
  if (Array.isArray(value)) return value.map(plainValue);
  const plain: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(value)) {
    Object.defineProperty(plain, name, {
      value: plainValue(inner),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return plain;
}

/** A whole number the server wrote in a table (`x-delivery-count`), if it is one. */
export function tableNumber(table: Table, name: string): number | undefined {
  const value = table[name];
  if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  if (typeof value === "bigint") return Number(value);
  return undefined;
}
