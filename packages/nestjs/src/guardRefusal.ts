import { ForbiddenException } from "@nestjs/common";
import { RpcException } from "@nestjs/microservices";
import { deadLetter, drop, type Logger, type Outcome } from "@ruststream/core";
import type { PatternOptions } from "./patternOptions.js";

/** What Nest says when a guard refuses (its `FORBIDDEN_MESSAGE`, in every context). */
export const forbiddenMessage = "Forbidden resource";

/**
 * True for a guard's refusal as it reaches the runtime. On the strategy, Nest's rpc context throws
 * `RpcException("Forbidden resource")`, which its default exception filter hands over as the
 * error packet `{ status: "error", message: "Forbidden resource" }` (an application's own filter
 * may pass the exception itself); in the module's handlers, a `ForbiddenException`. A handler that
 * throws either says the same and is taken the same way; a guard that throws an exception of its
 * own is a failure like any other.
 */
export function isGuardRefusal(error: unknown): boolean {
  if (error instanceof ForbiddenException) return true;
  if (error instanceof RpcException) return error.getError() === forbiddenMessage;
  if (typeof error !== "object" || error === null) return false;
  const packet = error as { readonly status?: unknown; readonly message?: unknown };
  return packet.status === "error" && packet.message === forbiddenMessage;
}

/**
 * Settles a message a guard refused: another delivery would be refused again, so it is not
 * retried but dead-lettered with the reason `"forbidden"` where the pattern declares a dead
 * letter, else dropped; logged at warn either way.
 */
export function refusalOutcome(options: PatternOptions, log: Logger): Outcome {
  const settled = options.deadLetter === undefined ? "dropped" : "dead-lettered";
  log.warn({ settled }, "a guard refused the message before the handler ran");
  return options.deadLetter === undefined ? drop() : deadLetter("forbidden");
}
