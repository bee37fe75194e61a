import { RustStreamError } from "./errors.js";
import { utf8Bytes, utf8Text } from "./utf8.js";

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
  /**
   * Entries in insertion order, each value as the map holds it: a value set as a string and not
   * read as bytes since is still that string (its bytes are its UTF-8), anything else is bytes.
   * For a writer whose wire takes text as well as bytes (a Redis argument, a Pulsar property), so
   * text is not encoded only to be copied or decoded again.
   */
  entriesAsHeld(): IterableIterator<[string, HeaderValue]>;
  /** A mutable copy. */
  clone(): HeaderMap;
  /** Same names with byte-equal values; order does not matter. */
  equals(other: ReadonlyHeaderMap): boolean;
}

const upperAscii = /[A-Z]/;

// Only ASCII folds: `toLowerCase()` would also fold non-ASCII letters, and two services (or a Rust one)
// must agree on which spellings name the same header.
function normalise(name: string): string {
  if (name.length === 0) {
    throw new RustStreamError("invalid-argument", "a header name cannot be empty: give it a name");
  }
  return upperAscii.test(name) ? name.replace(/[A-Z]+/g, (s) => s.toLowerCase()) : name;
}

/** `String.prototype.toWellFormed` (ES2024, in every Node the project runs on; its lib is ES2023). */
interface WellFormedText {
  toWellFormed(): string;
}

/**
 * A value as the map keeps it: bytes as given, or a string kept as text until its bytes are asked
 * for. Lone surrogates become U+FFFD now, as UTF-8 encoding would make them, so a string read back
 * is the one its bytes decode to.
 */
function stored(value: HeaderValue): Uint8Array | string {
  return typeof value === "string" ? (value as unknown as WellFormedText).toWellFormed() : value;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const noNames: string[] = [];
/** Where a map starts keeping an index of its names beside the list. */
const INDEXED_FROM = 32;
const noValues: (Uint8Array | string)[] = [];

function isReadonlyHeaderMap(init: HeaderInit): init is ReadonlyHeaderMap {
  return typeof (init as ReadonlyHeaderMap).getString === "function";
}

/**
 * Message headers: case-insensitive names (stored lowercased), byte values, insertion order kept.
 *
 * A flat list rather than a hash table: messages carry a handful of headers, a scan over them is
 * cheaper than hashing, and an empty map costs one empty array. Past {@link INDEXED_FROM} names a
 * map also keeps an index of them: a message from a peer may carry any number of headers, and a
 * scan per header read would make decoding it cost the square of their count (100,000 took 36 s).
 *
 * A value set as a string stays a string until its bytes are read (then they are kept): most of
 * what the runtime sets (a content type, a retry count, a correlation id) is read back as a string
 * or not at all, and a copy of a string costs nothing.
 */
export class HeaderMap implements ReadonlyHeaderMap {
  // Most deliveries carry no headers: until the first set, a map shares these two empty arrays
  // (never written to), so an empty map is one object rather than three.
  #names: string[] = noNames;
  #values: (Uint8Array | string)[] = noValues;
  /** Each name's place in the list, once the map holds {@link INDEXED_FROM} names; built on use. */
  #index: Map<string, number> | undefined;

  constructor(init?: HeaderInit) {
    if (init === undefined) return;
    if (init instanceof HeaderMap) {
      // As a set of each entry would: the same values (bytes shared, strings kept as text).
      if (init.#names !== noNames) {
        this.#names = init.#names.slice();
        this.#values = init.#values.slice();
      }
      return;
    }
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
    const i = this.#find(normalise(name));
    return i < 0 ? undefined : this.#bytesAt(i);
  }

  getString(name: string): string | undefined {
    if (this.#names === noNames && name.length > 0) return undefined;
    const i = this.#find(normalise(name));
    if (i < 0) return undefined;
    const value = this.#values[i]!;
    if (typeof value === "string") return value;
    try {
      // Strict: a binary value reads as "not a string", not as text full of replacement characters.
      return utf8Text(value);
    } catch {
      return undefined;
    }
  }

  /** The place of a normalised name in the list, or -1. */
  #find(key: string): number {
    const names = this.#names;
    if (names.length < INDEXED_FROM) return names.indexOf(key);
    let index = this.#index;
    if (index === undefined) {
      index = new Map();
      for (let i = 0; i < names.length; i++) index.set(names[i]!, i);
      this.#index = index;
    }
    return index.get(key) ?? -1;
  }

  /** The value at `i` as bytes, encoded once and kept if it was set as a string. */
  #bytesAt(i: number): Uint8Array {
    const value = this.#values[i]!;
    if (typeof value !== "string") return value;
    const bytes = utf8Bytes(value);
    this.#values[i] = bytes;
    return bytes;
  }

  has(name: string): boolean {
    return this.#find(normalise(name)) >= 0;
  }

  /** Sets a value; replacing an existing name keeps its place in the order. */
  set(name: string, value: HeaderValue): this {
    const key = normalise(name);
    const i = this.#find(key);
    if (i < 0) {
      if (this.#names === noNames) {
        // Literals of one, not pushes onto empty arrays: a first push reserves room for 17, and a
        // reply or a stored copy usually carries one or two headers for its whole life.
        this.#names = [key];
        this.#values = [stored(value)];
      } else {
        this.#index?.set(key, this.#names.length);
        this.#names.push(key);
        this.#values.push(stored(value));
      }
    } else {
      this.#values[i] = stored(value);
    }
    return this;
  }

  delete(name: string): boolean {
    const i = this.#find(normalise(name));
    if (i < 0) return false;
    this.#names.splice(i, 1);
    this.#values.splice(i, 1);
    // The places after it moved: built again on the next lookup, if the map is still that large.
    this.#index = undefined;
    return true;
  }

  *keys(): IterableIterator<string> {
    yield* this.#names;
  }

  *entries(): IterableIterator<[string, Uint8Array]> {
    for (let i = 0; i < this.#names.length; i++) {
      yield [this.#names[i]!, this.#bytesAt(i)];
    }
  }

  *entriesAsHeld(): IterableIterator<[string, HeaderValue]> {
    for (let i = 0; i < this.#names.length; i++) yield [this.#names[i]!, this.#values[i]!];
  }

  [Symbol.iterator](): IterableIterator<[string, Uint8Array]> {
    return this.entries();
  }

  /** A copy whose values are copies too, so neither side sees the other's later writes. */
  clone(): HeaderMap {
    const copy = new HeaderMap();
    if (this.#names === noNames) return copy;
    copy.#names = this.#names.slice();
    // Strings are immutable: only bytes need copying.
    copy.#values = this.#values.map((value) => (typeof value === "string" ? value : value.slice()));
    return copy;
  }

  equals(other: ReadonlyHeaderMap): boolean {
    if (other.size !== this.size) return false;
    for (let i = 0; i < this.#names.length; i++) {
      const theirs = other.get(this.#names[i]!);
      if (theirs === undefined || !bytesEqual(theirs, this.#bytesAt(i))) return false;
    }
    return true;
  }
}
