import { notDecodable, overLimit } from "./decodeRefusal.js";

function uint(bytes: Uint8Array, at: number, size: number): number {
  let value = 0;
  for (let i = 0; i < size; i++) value = value * 256 + bytes[at + i]!;
  return value;
}

/**
 * Where the value that is not an array or map, whose type byte `b` was at `pos - 1`, ends; or -1
 * when its head runs past the end or `b` is the reserved 0xc1.
 */
function valueEnd(bytes: Uint8Array, b: number, pos: number): number {
  if (b <= 0x7f || b >= 0xe0) return pos; // fixint
  if (b >= 0xa0 && b <= 0xbf) return pos + (b & 0x1f); // fixstr
  switch (b) {
    case 0xc0: // nil, false, true
    case 0xc2:
    case 0xc3:
      return pos;
    case 0xcc: // uint 8 .. 64, int 8 .. 64, float 32 and 64
    case 0xd0:
      return pos + 1;
    case 0xcd:
    case 0xd1:
      return pos + 2;
    case 0xca:
    case 0xce:
    case 0xd2:
      return pos + 4;
    case 0xcb:
    case 0xcf:
    case 0xd3:
      return pos + 8;
    case 0xd4: // fixext 1 .. 16: a type byte, then the data
      return pos + 2;
    case 0xd5:
      return pos + 3;
    case 0xd6:
      return pos + 5;
    case 0xd7:
      return pos + 9;
    case 0xd8:
      return pos + 17;
    case 0xc4: // bin 8, str 8: a length byte
    case 0xd9:
      return lengthEnd(bytes, pos, 1, 0);
    case 0xc5:
    case 0xda:
      return lengthEnd(bytes, pos, 2, 0);
    case 0xc6:
    case 0xdb:
      return lengthEnd(bytes, pos, 4, 0);
    case 0xc7: // ext 8 .. 32: a length, a type byte, the data
      return lengthEnd(bytes, pos, 1, 1);
    case 0xc8:
      return lengthEnd(bytes, pos, 2, 1);
    case 0xc9:
      return lengthEnd(bytes, pos, 4, 1);
    default:
      return -1;
  }
}

function lengthEnd(bytes: Uint8Array, pos: number, size: number, extra: number): number {
  if (pos + size > bytes.length) return -1;
  return pos + size + extra + uint(bytes, pos, size);
}

/**
 * The items an array or map head declares (a map's keys and values counted apart) and where the
 * head ends, or undefined when it runs past the end.
 */
function containerHead(
  bytes: Uint8Array,
  b: number,
  pos: number,
): { readonly items: number; readonly end: number } | undefined {
  if (b <= 0x8f) return { items: (b & 0x0f) * 2, end: pos };
  if (b <= 0x9f) return { items: b & 0x0f, end: pos };
  const size = b === 0xdc || b === 0xde ? 2 : 4;
  if (pos + size > bytes.length) return undefined;
  return { items: uint(bytes, pos, size) * (b >= 0xde ? 2 : 1), end: pos + size };
}

function isContainer(b: number): boolean {
  return (b >= 0x80 && b <= 0x9f) || (b >= 0xdc && b <= 0xdf);
}

/**
 * Walks the heads of a MessagePack payload's value, without decoding it, and throws core's error
 * (`invalid-argument`) for nesting deeper than `maxDepth`, or for arrays and maps declaring more
 * items, all told, than the payload has bytes: every item takes at least one, and the decoder
 * allocates what a head declares before reading its items (a 10 KB payload of nested `array 16`
 * heads declaring 56,540 items each held 1.4 GB). A head cut short or a reserved byte ends the
 * walk, leaving the error to the decoder. Iterative, and linear in the payload's size.
 */
export function checkMsgpack(bytes: Uint8Array, maxDepth: number): void {
  // Items still to come in each open array or map.
  const left: number[] = [];
  // Items declared by every head so far: at most one per byte in a payload that holds them.
  let declared = 0;
  let pos = 0;
  while (pos < bytes.length) {
    const at = pos;
    const b = bytes[pos++]!;
    if (isContainer(b)) {
      // An array or map, even an empty one, is a level.
      if (left.length + 1 > maxDepth) {
        throw overLimit(
          "MessagePack",
          "msgpackCodec",
          `nesting ${maxDepth + 1} levels deep`,
          "maxDepth",
          maxDepth,
          at,
        );
      }
      const head = containerHead(bytes, b, pos);
      if (head === undefined) return;
      declared += head.items;
      if (declared > bytes.length) {
        throw notDecodable(
          "MessagePack",
          `its arrays and maps declare ${declared} items by here, more than its ${bytes.length} bytes can hold`,
          at,
        );
      }
      pos = head.end;
      if (head.items > 0) {
        left.push(head.items);
        continue;
      }
    } else {
      pos = valueEnd(bytes, b, pos);
      if (pos < 0) return;
    }
    // A value is complete: so is every level it was the last item of.
    for (;;) {
      const open = left.length - 1;
      if (open < 0) return;
      if (--left[open]! > 0) break;
      left.pop();
    }
  }
}
