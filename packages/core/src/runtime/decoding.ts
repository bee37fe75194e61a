import type { Codec } from "../codec/codec.js";
import { type CodecsByType, mediaType } from "../codec/codecsByType.js";
import type { Delivery } from "../delivery.js";
import { RustStreamError } from "../errors.js";
import { headerNames } from "../headerNames.js";
import { describeIssues, type StandardSchemaV1 } from "./standardSchema.js";

/** What decode answers when the delivery failed and the failure policy has already settled it. */
export const FAILED: unique symbol = Symbol("failed");

/** Validation that answered with a promise; rare, so the common path never allocates one. */
export class PendingDecode {
  constructor(readonly promise: Promise<unknown>) {}
}

/**
 * Turns a payload into the handler's message: the codec, then the schema when there is one. With
 * `codecs`, a delivery whose `content-type` names another media type than the codec's is decoded
 * by the one of `codecs` it names, and refused when it names none.
 */
export class MessageDecoder {
  readonly #codec: Codec<unknown>;
  readonly #codecs: CodecsByType | undefined;
  readonly #ownType: string;
  readonly #schema: StandardSchemaV1 | undefined;
  readonly #failed: (delivery: Delivery, error: unknown) => void;

  constructor(
    codec: Codec<unknown>,
    codecs: CodecsByType | undefined,
    schema: StandardSchemaV1 | undefined,
    failed: (delivery: Delivery, error: unknown) => void,
  ) {
    this.#codec = codec;
    this.#codecs = codecs;
    this.#ownType = mediaType(codec.contentType);
    this.#schema = schema;
    this.#failed = failed;
  }

  /** The message, `FAILED` (already handed to the failure policy), or a pending validation. */
  decode(delivery: Delivery): unknown {
    const unreadable = delivery.decodeError;
    if (unreadable !== undefined) {
      this.#failed(delivery, unreadable);
      return FAILED;
    }
    // Without `codecs` the content-type is not read: the common path costs no header lookup.
    const codec = this.#codecs === undefined ? this.#codec : this.#codecOf(delivery);
    if (codec === undefined) return FAILED;
    let value: unknown;
    try {
      value = codec.decode(delivery.payload);
    } catch (error) {
      this.#failed(delivery, error);
      return FAILED;
    }
    const schema = this.#schema;
    if (schema === undefined) return value;
    let result: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;
    try {
      result = schema["~standard"].validate(value);
    } catch (error) {
      this.#failed(delivery, error);
      return FAILED;
    }
    if (result instanceof Promise) {
      return new PendingDecode(
        result.then(
          (checked) => this.#checked(delivery, checked),
          (error: unknown) => {
            this.#failed(delivery, error);
            return FAILED;
          },
        ),
      );
    }
    return this.#checked(delivery, result);
  }

  /** The codec the delivery's content-type names; `undefined` once a type none decodes is refused. */
  #codecOf(delivery: Delivery): Codec<unknown> | undefined {
    const type = delivery.headers.getString(headerNames.contentType);
    if (type === undefined || mediaType(type) === this.#ownType) return this.#codec;
    const codecs = this.#codecs as CodecsByType;
    const chosen = codecs.get(type);
    if (chosen !== undefined) return chosen;
    this.#failed(
      delivery,
      new RustStreamError(
        "invalid-argument",
        `the message on "${delivery.name}" has the content-type ${type}, which neither the subscriber's codec (${this.#ownType}) nor its codecs (${codecs.types.join(", ")}) decode: give its codec in subscriber(source, { codecs })`,
      ),
    );
    return undefined;
  }

  #checked(delivery: Delivery, result: StandardSchemaV1.Result<unknown>): unknown {
    if (result.issues === undefined) return result.value;
    this.#failed(
      delivery,
      new RustStreamError(
        "invalid-argument",
        `the message on "${delivery.name}" does not match the subscriber's schema: ${describeIssues(result.issues)}`,
        { cause: result.issues },
      ),
    );
    return FAILED;
  }
}
