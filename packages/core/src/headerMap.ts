import { RustStreamError } from "./errors.js";
import { utf8Bytes } from "./utf8.js";

/** A header value as a caller may give it: bytes as they are, or a string stored as UTF-8. */
export type HeaderValue = Uint8Array | string;

/** What a header map can be built from. */
export type HeaderInit =
  | ReadonlyHeaderMap
  | Iterable<readonly [string, HeaderValue]>
  | Readonly<Record<string, HeaderValue>>;

/** The reading half of {@link HeaderMap}: what a delivery hands to a handler. */
export interface ReadonlyHeaderMap extends Iterable<[string, Uint8Array]> {
  readonly size: number;
  /** The value's bytes, or `undefined` when absent. */
  get(name: string): Uint8Array | undefined;
  /** The value decoded as UTF-8, or `undefined` when absent or not valid UTF-8. */
  getString(name: string): string | undefined;
  has(name: string): boolean;
  /** Lowercased names in insertion order. */
  keys(): IterableIterator<string>;
  /** Entries in insertion order. */
  entries(): IterableIterator<[string, Uint8Array]>;
  /** A mutable copy. */
  clone(): HeaderMap;
  /** Same names with byte-equal values; order does not matter. */
  equals(other: ReadonlyHeaderMap): boolean;
}

// Fatal, so a binary value reads as "not a string" instead of a string full of replacement characters.
const decoder = new TextDecoder("utf-8", { fatal: true });
const upperAscii = /[A-Z]/;

// Only ASCII folds: `toLowerCase()` would also fold non-ASCII letters, and two services (or a Rust one)
// must agree on which spellings name the same header.
function normalise(name: string): string {
  if (name.length === 0) {
    throw new RustStreamError("invalid-argument", "a header name cannot be empty: give it a name");
  }
  return upperAscii.test(name) ? name.replace(/[A-Z]+/g, (s) => s.toLowerCase()) : name;
}

function toBytes(value: HeaderValue): Uint8Array {
  return typeof value === "string" ? utf8Bytes(value) : value;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const noNames: string[] = [];
const noValues: Uint8Array[] = [];

function isReadonlyHeaderMap(init: HeaderInit): init is ReadonlyHeaderMap {
  return typeof (init as ReadonlyHeaderMap).getString === "function";
}

/**
 * Message headers: case-insensitive names (stored lowercased), byte values, insertion order kept.
 *
 * A flat list rather than a hash table: messages carry a handful of headers, a scan over them is
 * cheaper than hashing, and an empty map costs one empty array.
 */
export class HeaderMap implements ReadonlyHeaderMap {
  // Most deliveries carry no headers: until the first set, a map shares these two empty arrays
  // (never written to), so an empty map is one object rather than three.
  #names: string[] = noNames;
  #values: Uint8Array[] = noValues;

  constructor(init?: HeaderInit) {
    if (init === undefined) return;
    const pairs = isReadonlyHeaderMap(init)
      ? init.entries()
      : Symbol.iterator in init
        ? (init as Iterable<readonly [string, HeaderValue]>)
        : Object.entries(init as Readonly<Record<string, HeaderValue>>);
    for (const [name, value] of pairs) this.set(name, value);
  }

  get size(): number {
    return this.#names.length;
  }

  get(name: string): Uint8Array | undefined {
    // An empty map answers without normalising; an empty name still fails as it would otherwise.
    if (this.#names === noNames && name.length > 0) return undefined;
    const i = this.#names.indexOf(normalise(name));
    return i < 0 ? undefined : this.#values[i];
  }

  getString(name: string): string | undefined {
    const bytes = this.get(name);
    if (bytes === undefined) return undefined;
    try {
      return decoder.decode(bytes);
    } catch {
      return undefined;
    }
  }

  has(name: string): boolean {
    return this.#names.includes(normalise(name));
  }

  /** Sets a value; replacing an existing name keeps its place in the order. */
  set(name: string, value: HeaderValue): this {
    const key = normalise(name);
    const i = this.#names.indexOf(key);
    if (i < 0) {
      if (this.#names === noNames) {
        this.#names = [];
        this.#values = [];
      }
      this.#names.push(key);
      this.#values.push(toBytes(value));
    } else {
      this.#values[i] = toBytes(value);
    }
    return this;
  }

  delete(name: string): boolean {
    const i = this.#names.indexOf(normalise(name));
    if (i < 0) return false;
    this.#names.splice(i, 1);
    this.#values.splice(i, 1);
    return true;
  }

  *keys(): IterableIterator<string> {
    yield* this.#names;
  }

  *entries(): IterableIterator<[string, Uint8Array]> {
    for (let i = 0; i < this.#names.length; i++) {
      yield [this.#names[i]!, this.#values[i]!];
    }
  }

  [Symbol.iterator](): IterableIterator<[string, Uint8Array]> {
    return this.entries();
  }

  /** A copy whose values are copies too, so neither side sees the other's later writes. */
  clone(): HeaderMap {
    const copy = new HeaderMap();
    if (this.#names === noNames) return copy;
    copy.#names = this.#names.slice();
    copy.#values = this.#values.map((value) => value.slice());
    return copy;
  }

  equals(other: ReadonlyHeaderMap): boolean {
    if (other.size !== this.size) return false;
    for (let i = 0; i < this.#names.length; i++) {
      const theirs = other.get(this.#names[i]!);
      if (theirs === undefined || !bytesEqual(theirs, this.#values[i]!)) return false;
    }
    return true;
  }
}
