import {
  type ArgumentsHost,
  BadRequestException,
  Catch,
  type RpcExceptionFilter,
} from "@nestjs/common";
import { type Observable, throwError } from "rxjs";

/**
 * True for a payload Nest refused as bad input: a `BadRequestException`, what `ValidationPipe` and
 * the `Parse*Pipe`s throw (and what a handler throws to say the same). Another delivery of the same
 * payload is refused again, so it is settled as a payload our schema rejects is, not retried:
 * `serveNest` hands it to the runtime as `undecodable(error)`, settled by the pattern's decode
 * policy (`failure.decode`; `"fail-fast"` stops the app with the rejection as its failure).
 */
export function isPayloadRejection(error: unknown): error is BadRequestException {
  return error instanceof BadRequestException;
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
