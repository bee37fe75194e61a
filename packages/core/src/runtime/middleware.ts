import type { OutgoingMessage, Receipt } from "../message.js";
import type { HandlerContext } from "./context.js";

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
 * Wraps every publish the app makes (replies, `ctx.out`, retry copies, dead letters, `publish` on the
 * running app): may change the message (add a header, frame the payload) before calling `next`.
 */
export type PublishMiddleware = (
  message: OutgoingMessage,
  next: (message: OutgoingMessage) => Promise<Receipt>,
) => Promise<Receipt>;

export interface Middleware {
  readonly consume?: ConsumeMiddleware;
  readonly publish?: PublishMiddleware;
}
