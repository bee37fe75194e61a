/** File bytes available in memory: `bytes[0]` is the byte at file offset `start`. */
export interface ByteWindow {
  readonly bytes: Uint8Array;
  readonly start: number;
}

export function windowEnd(win: ByteWindow): number {
  return win.start + win.bytes.length;
}

export function viewOf(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Reads a key's bytes as ASCII. Valid stream keys are ASCII by definition; anything else comes out
 * as a string the key check then rejects, which is what the Rust reader does too.
 */
export function asciiString(bytes: Uint8Array, start: number, end: number): string {
  let s = "";
  for (let i = start; i < end; i++) s += String.fromCharCode(bytes[i]!);
  return s;
}

export function writeAscii(target: Uint8Array, at: number, s: string): void {
  for (let i = 0; i < s.length; i++) target[at + i] = s.charCodeAt(i);
}

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
