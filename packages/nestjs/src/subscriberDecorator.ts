import { SetMetadata } from "@nestjs/common";
import { RustStreamError, type Source } from "@ruststream/core";
import { assertKnownKeys, type PatternOptions } from "./patternOptions.js";
import { regExpRefusal } from "./regExpPattern.js";

/** What `@Subscriber(source, options)` takes: a subscriber's options, and whether it replies. */
export interface SubscriberOptions extends PatternOptions {
  /**
   * Answer the message's `reply-to` with what the method returns (a request's handler, as a
   * `@MessagePattern`); default false (an event's, as an `@EventPattern`).
   */
  readonly reply?: boolean;
}

/** One decorated method's subscriber, as `RustStreamModule` mounts it. */
export interface SubscriberDeclaration {
  readonly source: string | Source;
  readonly options: PatternOptions;
  readonly reply: boolean;
}

const subscriberMetadata = Symbol.for("@ruststream/nestjs.subscriber");

/**
 * Makes a method of a Nest provider (or controller) a RustStream subscriber of the app
 * `RustStreamModule` runs: `@Subscriber("orders", { maxAttempts: 5, deadLetter: "orders-dlq" })`.
 * Its parameters are Nest's `@Payload()` and `@Ctx()` (a `RustStreamContext`), with Nest's pipes,
 * guards, interceptors and exception filters around it. An option it does not know is refused when
 * the class is declared.
 */
export function Subscriber(
  source: string | Source,
  options: SubscriberOptions = {},
): MethodDecorator {
  if (source instanceof RegExp) {
    throw regExpRefusal(
      `@Subscriber(${String(source)})`,
      'as its source: @Subscriber(new NatsSubject("orders.*", { redeliverTo: "orders.retry" })) or @Subscriber(new RedisPubSubPattern("orders.*"))',
    );
  }
  if (typeof source !== "string" && (typeof source !== "object" || source === null)) {
    throw new RustStreamError(
      "invalid-argument",
      `@Subscriber(${String(source)}): give the topic's name or one of the broker's descriptors`,
    );
  }
  const { reply = false, ...own } = options;
  assertKnownKeys(`@Subscriber(${JSON.stringify(describe(source))})`, own);
  const declaration: SubscriberDeclaration = { source, options: own, reply };
  return SetMetadata(subscriberMetadata, declaration);
}

/** The declaration a method carries, if it is a subscriber. */
export function readSubscriber(method: unknown): SubscriberDeclaration | undefined {
  if (typeof method !== "function") return undefined;
  return Reflect.getMetadata(subscriberMetadata, method) as SubscriberDeclaration | undefined;
}

function describe(source: string | Source): string {
  return typeof source === "string" ? source : source.name;
}
