import { HeaderMap } from "@ruststream/core";

// NATS carries a header value as one line of text: no CR or LF, surrounding spaces trimmed by the
// clients. A value that cannot go as it is (bytes that are not UTF-8, a line break, surrounding
// whitespace) travels as base64 behind a prefix, and is read back to the same bytes; a text that
// starts with the prefix is encoded too, so reading back is never ambiguous. Text values, all a
// RustStream service written in Rust sends, go as they are.

/** A header name NATS carries: printable ASCII other than the colon (which ends it). */
export const headerName = /^[!-9;-~]+$/;

/** What starts an encoded value: base64 of the value's bytes follows. */
export const encodedValuePrefix = "=?rs-b64?";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** The value as NATS carries it. */
export function headerLine(bytes: Uint8Array): string {
  let text: string | undefined;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    text = undefined;
  }
  if (
    text !== undefined &&
    !/[\r\n]/.test(text) &&
    text.trim() === text &&
    !text.startsWith(encodedValuePrefix)
  ) {
    return text;
  }
  return `${encodedValuePrefix}${Buffer.from(bytes).toString("base64")}`;
}

/** A header map from the lines a message carried (the first of a repeated name), values decoded. */
export function headerMapOf(lines: Iterable<readonly [string, string]>): HeaderMap {
  const map = new HeaderMap();
  for (const [name, value] of lines) {
    if (map.has(name)) continue;
    map.set(
      name,
      value.startsWith(encodedValuePrefix)
        ? new Uint8Array(Buffer.from(value.slice(encodedValuePrefix.length), "base64"))
        : value,
    );
  }
  return map;
}
