const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A payload holding `text` as UTF-8. */
export const bytes = (text: string): Uint8Array => encoder.encode(text);

/** A payload read as UTF-8. */
export const text = (value: Uint8Array): string => decoder.decode(value);
