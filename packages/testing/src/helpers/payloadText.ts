const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A payload holding `text` as UTF-8. */
export function bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/** A payload read as UTF-8. */
export function text(value: Uint8Array): string {
  return decoder.decode(value);
}
