import { type Span, SpanStatusCode } from "@opentelemetry/api";
import { isRustStreamError } from "@ruststream/core";
import { errorType } from "./attributes.js";

/**
 * `error.type` for a failure: RustStream's error code (`timeout`, `broker-failure`), else the
 * error's class name (a subclass that sets no `name` still has its own constructor's).
 */
function typeOf(error: unknown): string {
  if (isRustStreamError(error)) return error.code;
  if (error instanceof Error) return error.constructor.name || error.name;
  return "_OTHER";
}

/** Marks the span failed: status error with the message, the exception recorded, `error.type`. */
export function recordFailure(span: Span, error: unknown): void {
  const message = error instanceof Error ? error.message : String(error);
  span.recordException(error instanceof Error ? error : message);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
  span.setAttribute(errorType, typeOf(error));
}
