// Text to UTF-8 bytes for the short strings every publish carries: its content type, its partition
// key, header values. TextEncoder's `encode` crosses into native code on each call, which costs more
// than a loop over a few dozen ASCII characters does (a CPU profile of app.publish on Redis streams
// spent 11% of its time in `encode` for the content type and the key: tooling/bench, "Publishing").

const encoder = new TextEncoder();
/** Longer text goes to TextEncoder, whose per-call cost no longer dominates. */
const shortText = 64;

/** The UTF-8 bytes of `text`, exactly as `new TextEncoder().encode(text)` gives them. */
export function utf8Bytes(text: string): Uint8Array {
  const length = text.length;
  if (length > shortText) return encoder.encode(text);
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    // Past ASCII a character takes more than one byte (and a lone surrogate becomes U+FFFD).
    if (code > 0x7f) return encoder.encode(text);
    bytes[i] = code;
  }
  return bytes;
}
