import type { OutgoingMessage, Receipt } from "../message.js";
import type { BatchContext, HandlerContext } from "./context.js";
import type { PublishPurpose } from "./events.js";

/**
 * Wraps every handler call of the app: runs before the handler (after decode and validation) and
 * sees what it returned. Call `next()` once to run the handler (or the next middleware) and return
 * its result; return an outcome instead to settle without running it.
 */
export type ConsumeMiddleware = (
  message: unknown,
  ctx: HandlerContext<Readonly<Record<string, never>>>,
  next: () => unknown,
) => unknown;

/**
 * Wraps every batch handler call of the app, as `consume` wraps a single message's: runs before the
 * handler (after each message decoded and validated) with the batch's messages and context. Call
 * `next()` once to run the handler and return its result.
 */
export type BatchMiddleware = (
  messages: readonly unknown[],
  ctx: BatchContext<Readonly<Record<string, never>>>,
  next: () => unknown,
) => unknown;

/** What a publish middleware is told beside the message. */
export interface PublishInfo {
  /** The kind of broker the message goes to, as its deliveries name it: `"kafka"`, `"memory"`. */
  readonly broker: string;
  /** What the publish is for; a `"request"` resolves once its reply came (or fails without one). */
  readonly purpose: PublishPurpose;
}

/**
 * Wraps every publish the app makes (replies, `ctx.out`, retry copies, dead letters, `publish` and
 * `request` on the running app or a `ctx.out` publisher): may change the message (add a header,
 * frame the payload) before calling `next`.
 */
export type PublishMiddleware = (
  message: OutgoingMessage,
  next: (message: OutgoingMessage) => Promise<Receipt>,
  info: PublishInfo,
) => Promise<Receipt>;

export interface Middleware {
  readonly consume?: ConsumeMiddleware;
  /** Around batch handlers (`.batch(n)`), which `consume` does not wrap. */
  readonly consumeBatch?: BatchMiddleware;
  readonly publish?: PublishMiddleware;
}
