import type { Codec } from "../codec/codec.js";
import type { HeaderInit } from "../headerMap.js";
import type { Receipt } from "../message.js";

const outMark: unique symbol = Symbol.for("@ruststream/core.out");

/**
 * A publish position a handler is given: where its messages go and, through `T`, what it may
 * publish there. Built with {@link out}; a bare string in `.publishes({ ... })` means `out(name)`.
 */
export interface OutDeclaration<T = unknown> {
  readonly [outMark]: true;
  readonly name: string;
  /** The codec for this position; the subscriber's codec when absent. */
  readonly codec: Codec<T> | undefined;
  /** Type-level only: what this position accepts. */
  readonly __value?: (value: T) => void;
}

/** Declares a publish position for `.publishes({ ... })`: `out<AuditEvent>("audit-log")`. */
export function out<T = unknown>(
  name: string,
  options: { codec?: Codec<T> } = {},
): OutDeclaration<T> {
  return { [outMark]: true, name, codec: options.codec };
}

export function isOutDeclaration(value: unknown): value is OutDeclaration<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [outMark]?: unknown })[outMark] === true
  );
}

/** What every {@link OutDeclaration} is, whatever it accepts. */
export interface AnyOutDeclaration {
  readonly [outMark]: true;
  readonly name: string;
}

/** What `.publishes({ ... })` accepts. */
export type OutDeclarations = Readonly<Record<string, string | AnyOutDeclaration>>;

/**
 * How the runtime publishes one value. `TOptions` is the broker's own per-message settings (an
 * explicit partition on Kafka), typed from the broker the subscriber is mounted on: `never` where
 * the broker has none.
 */
export interface PublishOptions<TOptions = never> {
  readonly headers?: HeaderInit;
  /** Keeps messages with one key in order on brokers that partition by key. */
  readonly partitionKey?: string | Uint8Array;
  /** The broker's per-message settings; one it cannot honour fails the publish. */
  readonly options?: TOptions;
}

export interface RequestOptions<TOptions = never> extends PublishOptions<TOptions> {
  /** How long to wait for the reply before rejecting with code `timeout`. */
  readonly timeoutMs: number;
  /**
   * Takes several replies from a responder that answers more than once: each decoded reply but
   * the last comes here as it arrives, and the request resolves with the last (see the brokers'
   * `RequestOptions.onPartial`).
   */
  readonly onPartialReply?: (value: unknown) => void;
}

/** A live publisher handed to a handler. */
export interface OutPublisher<T = unknown, TOptions = never> {
  /** The destination. */
  readonly name: string;
  /** Encodes `value`, publishes it, and resolves on the broker's confirmation. */
  publish(value: T, options?: PublishOptions<TOptions>): Promise<Receipt>;
  /**
   * Publishes `value` as a request and resolves with the decoded reply; rejects with code
   * `unsupported` on a broker without request/reply, `timeout` when no reply came in time.
   */
  request(value: T, options: RequestOptions<TOptions>): Promise<unknown>;
}

type ValueOf<D> = D extends OutDeclaration<infer T> ? T : unknown;

/** The `ctx.out` of a handler whose subscriber declared `D`, on a broker taking `TOptions`. */
export type OutPublishers<D, TOptions = never> = {
  readonly [K in keyof D]: OutPublisher<ValueOf<D[K]>, TOptions>;
};
