const QUOTE = 0x22;
const BACKSLASH = 0x5c;
// `[` and `]` are `{` and `}` with bit 5 clear: one comparison each after setting it.
const OPEN = 0x7b;
const CLOSE = 0x7d;
const CASE_BIT = 0x20;

/**
 * The offset of the first bracket nesting deeper than `maxDepth` in JSON text held as UTF-8, or -1.
 * Counts brackets outside strings and nothing else: validating is `JSON.parse`'s. Bytes of a
 * multi-byte character are all 0x80 or above, so no ASCII byte is mistaken inside one.
 */
export function tooDeepAt(bytes: Uint8Array, maxDepth: number): number {
  // Every level takes a byte: a payload this short cannot nest too deep.
  if (bytes.length <= maxDepth) return -1;
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === QUOTE) {
      for (i++; i < bytes.length; i++) {
        const c = bytes[i]!;
        if (c === QUOTE) break;
        if (c === BACKSLASH) i++;
      }
    } else if ((b | CASE_BIT) === OPEN) {
      if (++depth > maxDepth) return i;
    } else if ((b | CASE_BIT) === CLOSE) {
      depth--;
    }
  }
  return -1;
}
