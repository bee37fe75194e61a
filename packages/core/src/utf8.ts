const encoder = new TextEncoder();

/**
 * The longest text encoded through `scratch`. V8 keeps a typed array of up to 64 bytes on its own
 * heap; a longer one needs a backing store of its own, which is what `TextEncoder.encode` always
 * makes.
 */
const SHORT = 64;
const scratch = new Uint8Array(SHORT);

/**
 * A string's UTF-8 bytes, in a fresh array the caller owns. `TextEncoder.encode` pays for a new
 * backing store on every call (about 0.6 µs on Node 20, ten times the encoding of a header value or
 * a small JSON payload), so short text is encoded into a scratch buffer and copied out instead.
 */
export function utf8Bytes(text: string): Uint8Array {
  if (text.length <= SHORT) {
    const { read, written } = encoder.encodeInto(text, scratch);
    // Text whose UTF-8 is longer than the scratch buffer stops short of the end: encode it whole.
    if (read === text.length) return scratch.slice(0, written);
  }
  return encoder.encode(text);
}

const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The text of UTF-8 `bytes`, exactly as `new TextDecoder("utf-8", { fatal: true }).decode(bytes)`
 * gives it, throwing where it throws: short ASCII (a header value going out as a string property)
 * without the native call.
 */
export function utf8Text(bytes: Uint8Array): string {
  const length = bytes.length;
  if (length > SHORT) return strictDecoder.decode(bytes);
  let text = "";
  for (let i = 0; i < length; i++) {
    const byte = bytes[i]!;
    // Past ASCII (a multi-byte character, a BOM the decoder drops, or no UTF-8 at all): the decoder.
    if (byte > 0x7f) return strictDecoder.decode(bytes);
    text += String.fromCharCode(byte);
  }
  return text;
}
