import { BadRequestException } from "@nestjs/common";
import { RpcException } from "@nestjs/microservices";
import { forbiddenMessage, isGuardRefusal } from "./guardRefusal.js";
import { envelopeOf, isEnvelope } from "./replyEnvelope.js";

/** The one key of the reply that carries a failure (see `replyEnvelope`). */
const errorKey = "@ruststream/nestjs:error";

/** What a `send` is answered with when its handler fails: Nest's error packet, in our envelope. */
export function errorReply(error: unknown): Readonly<Record<string, unknown>> {
  return envelopeOf(errorKey, nestError(error));
}

/** The error a reply carries, or undefined for a reply that is a handler's value. */
export function readErrorReply(reply: unknown): { readonly err: unknown } | undefined {
  if (!isEnvelope(reply, errorKey)) return undefined;
  return { err: (reply as Record<string, unknown>)[errorKey] };
}

/**
 * The error as Nest's own transports send it to the caller: an `RpcException`'s error (text as
 * `{ status, message }`), a rejected payload's messages, and for anything else what Nest's
 * exception filter already made of it (`{ status: "error", message: "Internal server error" }`,
 * never an internal exception's text).
 */
function nestError(error: unknown): unknown {
  // The module's handlers get a guard's refusal as a ForbiddenException, an Error like any other
  // below: answered with Nest's refusal, as the strategy's are.
  if (isGuardRefusal(error)) return { status: "error", message: forbiddenMessage };
  if (error instanceof RpcException) {
    const own = error.getError();
    return typeof own === "object" && own !== null ? own : { status: "error", message: own };
  }
  if (error instanceof BadRequestException) {
    const response = error.getResponse();
    const message =
      typeof response === "object" && response !== null && "message" in response
        ? (response as { message: unknown }).message
        : error.message;
    return { status: "error", message };
  }
  if (error instanceof Error) return { status: "error", message: "Internal server error" };
  return error;
}
