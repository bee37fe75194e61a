import {
  type ArgumentsHost,
  BadRequestException,
  Catch,
  type RpcExceptionFilter,
} from "@nestjs/common";
import { type DecodePolicy, deadLetter, drop, type Logger, type Outcome } from "@ruststream/core";
import { type Observable, throwError } from "rxjs";
import type { PatternOptions } from "./patternOptions.js";

/**
 * True for a payload Nest refused as bad input: a `BadRequestException`, what `ValidationPipe` and
 * the `Parse*Pipe`s throw (and what a handler throws to say the same). Another delivery of the same
 * payload is refused again, so it is settled as a payload our schema rejects is, not retried.
 */
export function isPayloadRejection(error: unknown): error is BadRequestException {
  return error instanceof BadRequestException;
}

/**
 * Settles a rejected payload by the pattern's decode policy (`failure.decode`; default
 * `"dead-letter"` where a dead letter is declared, else `"drop"`), logged at error as the runtime
 * logs a payload that failed to decode. The dead letter's reason is `"decode"`, as the runtime's.
 */
export function rejectionOutcome(
  options: PatternOptions,
  error: BadRequestException,
  log: Logger,
): Outcome {
  const policy: DecodePolicy =
    options.failure?.decode ?? (options.deadLetter === undefined ? "drop" : "dead-letter");
  log.error({ error, policy }, "a pipe rejected the payload before the handler ran");
  if (policy === "drop") return drop();
  if (policy === "dead-letter") return deadLetter("decode");
  // "fail-fast" stops the app from the runtime's decoding alone; from a handler it is a failure.
  throw error;
}

/**
 * Lets a pipe's rejection reach the RustStream transport strategy as itself. Nest's default
 * exception filter turns every exception but an `RpcException` into "Internal server error" before
 * a transport sees it, so without this filter a rejected payload is a failed attempt like any
 * other (retried, then dead-lettered). `app.useGlobalFilters(new PayloadRejectionFilter())`.
 * `RustStreamModule`'s handlers need no filter: their exceptions reach the runtime as thrown.
 */
@Catch(BadRequestException)
export class PayloadRejectionFilter implements RpcExceptionFilter<BadRequestException> {
  catch(exception: BadRequestException, _host: ArgumentsHost): Observable<never> {
    return throwError(() => exception);
  }
}
