import { bytes, type Codec, headerNames, json, RustStreamError } from "@ruststream/core";
import type { SubjectMessage } from "../client/link.js";

/** Where a value was read, for a refusal to name: the bucket, the key, the entry's revision. */
interface ValueAt {
  readonly bucket: string;
  readonly key: string;
  readonly message: SubjectMessage;
}

/**
 * The codecs a KV bucket's reads decode a value with, chosen by the `content-type` its put wrote:
 * the ones given, then core's `json` and `bytes` for the content types none of them has (a given
 * codec of `application/json`, say `jsonCodec({ maxDepth })`, takes its place). Core's runtime
 * picks no codec by content type (a subscriber decodes with its one codec), so this lookup is the
 * only one; a media type is matched without its parameters and case (`Application/JSON;
 * charset=utf-8` is `application/json`).
 */
export class KvCodecs {
  readonly #byType: ReadonlyMap<string, Codec<unknown>>;

  constructor(given: readonly Codec<unknown>[] | undefined, what: string) {
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
    for (const codec of [json, bytes] as Codec<unknown>[]) {
      const type = mediaType(codec.contentType);
      if (!byType.has(type)) byType.set(type, codec);
    }
    this.#byType = byType;
  }

  /**
   * The value `at` holds: decoded by `codec` when given (whatever its put wrote); else by the
   * codec of its content type, its bytes when it has none. A content type no codec here decodes,
   * and a value its codec refuses, are refused (`invalid-argument`), naming the key, the revision
   * and the fix.
   */
  decode<T>({ bucket, key, message }: ValueAt, codec: Codec<T> | undefined): T {
    const stored = message.headers.getString(headerNames.contentType);
    const where = `the value of the key "${key}" at revision ${message.sequence} of the KV bucket "${bucket}"`;
    if (codec !== undefined) {
      try {
        return codec.decode(message.payload);
      } catch (cause) {
        throw new RustStreamError(
          "invalid-argument",
          `${where} is not ${codec.contentType} (its content-type: ${stored ?? "none"}): read it with the codec its put took, or without one for the codec of its content-type`,
          { cause },
        );
      }
    }
    if (stored === undefined) return message.payload as T;
    const chosen = this.#byType.get(mediaType(stored));
    if (chosen === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `${where} has the content-type ${stored}, which none of the codecs the bucket's reads know decodes (${[...this.#byType.keys()].join(", ")}): give its codec in new NatsKv(bucket, { codecs }), or read it with { codec } (core's bytes for its bytes)`,
      );
    }
    try {
      return chosen.decode(message.payload) as T;
    } catch (cause) {
      throw new RustStreamError(
        "invalid-argument",
        `${where} is not the ${stored} its content-type says: read it with { codec } (core's bytes for its bytes)`,
        { cause },
      );
    }
  }
}

/** A content type's media type: without its parameters, in lower case. */
function mediaType(contentType: string): string {
  const end = contentType.indexOf(";");
  return (end === -1 ? contentType : contentType.slice(0, end)).trim().toLowerCase();
}
