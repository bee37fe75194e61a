import { type Codec, json, type RawMessage, type ReadonlyHeaderMap } from "@ruststream/core";

/** A message the app (or the test) published, as a test reads it back. */
export class PublishedMessage {
  readonly name: string;
  readonly payload: Uint8Array;
  readonly headers: ReadonlyHeaderMap;
  readonly partitionKey: Uint8Array | undefined;
  readonly #codec: Codec<unknown>;

  constructor(raw: RawMessage, codec: Codec<unknown> = json) {
    this.name = raw.name;
    this.payload = raw.payload;
    this.headers = raw.headers;
    this.partitionKey = raw.partitionKey;
    this.#codec = codec;
  }

  /** The payload decoded with the codec `published()` was given (default JSON); throws if it is not. */
  get value(): unknown {
    return this.#codec.decode(this.payload);
  }

  /** A header as text, or `undefined`. */
  header(name: string): string | undefined {
    return this.headers.getString(name);
  }
}
