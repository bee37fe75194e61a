// UTF-8 for the short strings every publish carries (its content type, its partition key, header
// values), both ways. TextEncoder and TextDecoder cross into native code on each call, which costs
// more than a loop over a few dozen ASCII characters does: a CPU profile of app.publish on Redis
// streams spent 11% of its time in `encode` for the content type and the key, one of Pulsar's 4% in
// `decode` turning them back into string properties (tooling/bench, "Publishing").

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

const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The text of UTF-8 `bytes`, exactly as `new TextDecoder("utf-8", { fatal: true }).decode(bytes)`
 * gives it, throwing where it throws: short ASCII (a header value going out as a string property)
 * without the native call.
 */
export function utf8Text(bytes: Uint8Array): string {
  const length = bytes.length;
  if (length > shortText) return strictDecoder.decode(bytes);
  let text = "";
  for (let i = 0; i < length; i++) {
    const byte = bytes[i]!;
    // Past ASCII (a multi-byte character, a BOM the decoder drops, or no UTF-8 at all): the decoder.
    if (byte > 0x7f) return strictDecoder.decode(bytes);
    text += String.fromCharCode(byte);
  }
  return text;
}
