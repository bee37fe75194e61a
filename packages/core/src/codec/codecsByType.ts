import { RustStreamError } from "../errors.js";
import type { Codec } from "./codec.js";

/**
 * Codecs chosen by the `content-type` a message carries: a subscriber's `codecs`, a NATS KV
 * bucket's. A media type is matched without its parameters and case (`Application/JSON;
 * charset=utf-8` is `application/json`).
 */
export class CodecsByType {
  readonly #byType: ReadonlyMap<string, Codec<unknown>>;

  /**
   * `given`, then each of `defaults` whose media type none of them has (a given codec takes a
   * default's place). A list that is not one, an item that is not a codec, and two given codecs of
   * one media type are refused (`invalid-argument`), naming `what`.
   */
  constructor(
    given: readonly Codec<unknown>[] | undefined,
    what: string,
    defaults: readonly Codec<unknown>[] = [],
  ) {
    if (given !== undefined && !Array.isArray(given)) {
      throw new RustStreamError(
        "invalid-argument",
        `${what}: codecs is a list of codecs (each with its contentType, encode and decode), not ${String(given)}`,
      );
    }
    const byType = new Map<string, Codec<unknown>>();
    for (const codec of given ?? []) {
      if (typeof codec?.contentType !== "string" || typeof codec.decode !== "function") {
        throw new RustStreamError(
          "invalid-argument",
          `${what}: each of codecs is a codec (its contentType, encode and decode), not ${String(codec)}`,
        );
      }
      const type = mediaType(codec.contentType);
      if (byType.has(type)) {
        throw new RustStreamError(
          "invalid-argument",
          `${what}: two of codecs decode ${type}: give one codec a content type`,
        );
      }
      byType.set(type, codec);
    }
    for (const codec of defaults) {
      const type = mediaType(codec.contentType);
      if (!byType.has(type)) byType.set(type, codec);
    }
    this.#byType = byType;
  }

  /** The codec of `contentType`'s media type, if there is one. */
  get(contentType: string): Codec<unknown> | undefined {
    return this.#byType.get(mediaType(contentType));
  }

  /** The media types there are codecs for, in the order given. */
  get types(): readonly string[] {
    return [...this.#byType.keys()];
  }
}

/** A content type's media type: without its parameters, in lower case. */
export function mediaType(contentType: string): string {
  const end = contentType.indexOf(";");
  return (end === -1 ? contentType : contentType.slice(0, end)).trim().toLowerCase();
}
