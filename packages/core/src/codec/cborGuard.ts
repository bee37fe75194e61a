import type { RustStreamError } from "../errors.js";
import { notDecodable, overLimit } from "./decodeRefusal.js";

/** What a CBOR payload may hold before it is handed to the decoder. */
export interface CborLimits {
  /**
   * Arrays, maps and tags nested deeper are refused (default 512): the decoder recurses per level,
   * so deeper nesting would take the stack.
   */
  readonly maxDepth?: number;
  /**
   * A bignum (tags 2 and 3) with more bytes is refused (default 128, a 1024-bit number): the
   * decoder converts one in time that grows with the square of its length.
   */
  readonly maxBignumBytes?: number;
}

export const DEFAULT_CBOR_LIMITS: Required<CborLimits> = { maxDepth: 512, maxBignumBytes: 128 };

/**
 * Tags cbor-x gives a meaning of its own beyond RFC 8949 (as of cbor-x 1.6): record structures and
 * packed values kept from one decode to the next, shared references that read the input again. A
 * message from a peer has no business with any of
 * them. Every other tag decodes as cbor-x decodes it (a standard one to its value, 27 to an `Error`
 * or a `RegExp`, an unknown one to a `Tag`).
 */
const REFUSED_TAGS: readonly (readonly [number, number])[] = [
  [6, 6], // packed reference
  [14, 15], // bundled strings
  [28, 29], // shareable and shared reference (the decoder reads the input again)
  [51, 51], // packed table
  [105, 105], // record (legacy)
  [216, 255], // packed prefixes and suffixes
  [27647, 32767], // packed prefixes and suffixes
  [0xdff9, 0xffff], // bundled strings, record definitions, records
  [0x53687264, 0x53687264], // shared data
  [1811939328, 2147483647], // packed prefixes and suffixes
];

function refusedTag(tag: number): boolean {
  for (const [from, to] of REFUSED_TAGS) if (tag >= from && tag <= to) return true;
  return false;
}

const BREAK = 0xff;

function refuse(what: string, at: number): RustStreamError {
  return notDecodable("CBOR this codec decodes", what, at);
}

function tooMuch(what: string, option: keyof CborLimits, limit: number, at: number): never {
  throw overLimit("CBOR", "cborCodec", what, option, limit, at);
}

/** An open array, map, tag or indefinite-length string, and how many items it still expects. */
interface Open {
  /** Items still to come; -1 for an indefinite length, which ends at a break byte. */
  left: number;
  /** Set on a bignum tag: its content must be a byte string within the limit. */
  readonly bignum: boolean;
  /** Set on a map: its items are keys and values in turn. */
  readonly map: boolean;
  /** Items complete so far: in a map, an even count means the next item is a key. */
  done: number;
}

/** `__proto__` in UTF-8: cbor-x reads a map key of these bytes as `__proto_`. */
const PROTO_KEY = [0x5f, 0x5f, 0x70, 0x72, 0x6f, 0x74, 0x6f, 0x5f, 0x5f];

function isProtoKey(bytes: Uint8Array, at: number, length: number): boolean {
  if (length !== PROTO_KEY.length) return false;
  for (let i = 0; i < length; i++) if (bytes[at + i] !== PROTO_KEY[i]) return false;
  return true;
}

function opened(left: number, kind: "bignum" | "map" | "other"): Open {
  return { left, bignum: kind === "bignum", map: kind === "map", done: 0 };
}

/**
 * Walks the heads of a CBOR payload, without decoding a value, and throws a `RustStreamError`
 * (`invalid-argument`) for what the decoder would take unbounded time or memory on, or should not
 * be handed at all: nesting over `maxDepth`, a bignum over `maxBignumBytes`, a tag in
 * {@link REFUSED_TAGS}, a length past the end of the payload, counts declaring more items than
 * the payload has bytes, anything after the one value.
 * Iterative, and linear in the payload's size.
 */
export function checkCbor(bytes: Uint8Array, limits: Required<CborLimits>): void {
  const end = bytes.length;
  const stack: Open[] = [];
  let declared = 0;
  let pos = 0;
  for (;;) {
    if (pos >= end) throw refuse("it ends inside a value", pos);
    const at = pos;
    const initial = bytes[pos++]!;
    const open = stack[stack.length - 1];
    if (initial === BREAK) {
      if (open === undefined || open.left !== -1)
        throw refuse("a break outside an indefinite value", at);
      stack.pop();
    } else {
      const major = initial >> 5;
      const info = initial & 0x1f;
      let arg: number;
      if (info < 24) {
        arg = info;
      } else if (info <= 27) {
        const size = 1 << (info - 24);
        if (pos + size > end) throw refuse("it ends inside a head", at);
        arg = 0;
        // Eight-byte arguments as a number: beyond 2^53 it is only ever compared with lengths.
        for (let i = 0; i < size; i++) arg = arg * 256 + bytes[pos + i]!;
        pos += size;
      } else if (info === 31 && major >= 2 && major <= 5) {
        arg = -1;
      } else {
        throw refuse(`reserved additional information ${info} for major type ${major}`, at);
      }
      if (open?.bignum && (major !== 2 || arg < 0)) {
        throw refuse("a bignum's content is not a byte string of known length", at);
      }
      switch (major) {
        case 2:
        case 3:
          if (arg < 0) {
            stack.push(opened(-1, "other"));
          } else {
            if (arg > end - pos) throw refuse(`a string of ${arg} bytes runs past the end`, at);
            if (open?.bignum && arg > limits.maxBignumBytes) {
              tooMuch(`a bignum of ${arg} bytes`, "maxBignumBytes", limits.maxBignumBytes, at);
            }
            // cbor-x renames this key (its guard against prototype pollution): refused, rather
            // than handed over under another name.
            if (major === 3 && open?.map && open.done % 2 === 0 && isProtoKey(bytes, pos, arg)) {
              throw refuse("a map key __proto__, which the decoder would rename", at);
            }
            pos += arg;
          }
          break;
        case 4:
        case 5: {
          const items = arg < 0 ? -1 : major === 4 ? arg : arg * 2;
          // Every item takes at least a byte: a count the rest cannot hold is cut short, and so
          // are counts that, all told, declare more items than the payload has bytes.
          if (items > end - pos) throw refuse(`a count of ${arg} runs past the end`, at);
          if (items > 0) declared += items;
          if (declared > end) {
            throw refuse(
              `its arrays and maps declare ${declared} items by here, more than its ${end} bytes can hold`,
              at,
            );
          }
          // An empty one is a level too, though it opens none.
          if (items === 0 && stack.length + 1 > limits.maxDepth) {
            tooMuch(`nesting ${stack.length + 1} levels deep`, "maxDepth", limits.maxDepth, at);
          }
          if (items !== 0) stack.push(opened(items, major === 5 ? "map" : "other"));
          break;
        }
        case 6:
          if (refusedTag(arg))
            throw refuse(`tag ${arg} has a meaning only cbor-x's own extensions give it`, at);
          stack.push(opened(1, arg === 2 || arg === 3 ? "bignum" : "other"));
          break;
        default:
          // Majors 0 and 1 (integers) and 7 (simple values, floats): held in the head.
          break;
      }
      if (stack.length > limits.maxDepth) {
        tooMuch(`nesting ${stack.length} levels deep`, "maxDepth", limits.maxDepth, at);
      }
      // A value that opened a level is complete once that level closes.
      if (stack[stack.length - 1] !== open) continue;
    }
    // One value is complete: the levels it completes close.
    for (;;) {
      const parent = stack[stack.length - 1];
      if (parent === undefined) {
        if (pos !== end) throw refuse(`${end - pos} bytes follow the value`, pos);
        return;
      }
      parent.done++;
      if (parent.left === -1) break;
      parent.left--;
      if (parent.left > 0) break;
      stack.pop();
    }
  }
}
