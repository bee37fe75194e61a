/**
 * Turns values into payload bytes and back. Synchronous by design: anything that needs I/O (a schema
 * registry) belongs in publish middleware or the broker, so the dispatch loop never waits on a codec.
 *
 * `T` is what `decode` promises. A general codec (JSON) says `unknown` and leaves the type to a
 * schema; a codec built for one message type may say that type, and handlers then receive it.
 */
export interface Codec<T = unknown> {
  /** Written as `content-type` on every message this codec encodes. */
  readonly contentType: string;
  /** Throws when the value cannot be represented; the runtime treats that as a handler failure. */
  encode(value: T): Uint8Array;
  /** Throws when the bytes are not a value; the runtime treats that as a decode failure. */
  decode(payload: Uint8Array): T;
}

/** What a codec's `decode` produces. */
export type DecodedBy<TCodec> = TCodec extends Codec<infer T> ? T : unknown;
