import { HeaderMap, type ReadonlyHeaderMap, RustStreamError } from "@ruststream/core";
import type { LinkProperties } from "./link.js";
import { propertyHeaders } from "./names.js";
import type { Table, TableValue } from "./topology/topology.js";

// A message's headers on AMQP: the four the framework names that AMQP has properties for
// (content-type, correlation-id, reply-to, message-id) travel as those properties, every other one
// as an entry of the header table (text as a long string, bytes as a byte array). A delivery shows
// both as one HeaderMap again, a property winning over a table entry of the same name.

/** Longer than this, a header table entry name is refused before publishing (AMQP's short string). */
const maxNameBytes = 255;

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
        typeof value === "string" ? value : Buffer.from(value).toString("utf8");
      continue;
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

function propertyOf(name: string): keyof typeof propertyHeaders | undefined {
  for (const [property, header] of Object.entries(propertyHeaders)) {
    if (header === name) return property as keyof typeof propertyHeaders;
  }
  return undefined;
}

/** A delivery's headers: the table's entries (each as text or bytes), then the properties. */
export function headersOf(properties: LinkProperties): HeaderMap {
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(properties.headers)) {
    const held = heldValue(value);
    if (held !== undefined && name.length > 0) headers.set(name, held);
  }
  for (const [property, header] of Object.entries(propertyHeaders)) {
    const value = properties[property as keyof typeof propertyHeaders];
    if (typeof value === "string") headers.set(header, value);
  }
  return headers;
}

/**
 * A table value as a header: text and bytes as they are, a number or boolean as its text (a quorum
 * queue's `x-delivery-count`), anything nested (`x-death`) as JSON, bytes inside as base64.
 */
function heldValue(value: TableValue | undefined): string | Uint8Array | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  // A plain Uint8Array over the same bytes: amqplib hands Buffers, headers hold bytes.
  if (value instanceof Uint8Array)
    return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value, (_key, v: unknown) =>
    v instanceof Uint8Array ||
    (typeof v === "object" && v !== null && (v as { type?: unknown }).type === "Buffer")
      ? Buffer.from(v instanceof Uint8Array ? v : (v as { data: number[] }).data).toString("base64")
      : typeof v === "bigint"
        ? v.toString()
        : v,
  );
}

/** A whole number the server wrote in a table (`x-delivery-count`), if it is one. */
export function tableNumber(table: Table, name: string): number | undefined {
  const value = table[name];
  if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  if (typeof value === "bigint") return Number(value);
  return undefined;
}
