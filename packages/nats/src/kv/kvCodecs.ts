import { bytes, type Codec, headerNames, json, RustStreamError } from "@ruststream/core";
import { CodecsByType } from "@ruststream/core/broker";
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
 * codec of `application/json`, say `jsonCodec({ maxDepth })`, takes its place), looked up by
 * core's `CodecsByType` as a subscriber's `codecs` are (a `KvWatch` subscriber given `{ codec:
 * bytes, codecs: [json, ...] }` decodes its entries as these reads do).
 */
export class KvCodecs {
  readonly #byType: CodecsByType;

  constructor(given: readonly Codec<unknown>[] | undefined, what: string) {
    this.#byType = new CodecsByType(given, what, [json, bytes as Codec<unknown>]);
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
    const chosen = this.#byType.get(stored);
    if (chosen === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `${where} has the content-type ${stored}, which none of the codecs the bucket's reads know decodes (${this.#byType.types.join(", ")}): give its codec in new NatsKv(bucket, { codecs }), or read it with { codec } (core's bytes for its bytes)`,
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
