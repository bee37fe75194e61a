import type { ExternalContextCreator } from "@nestjs/core";
import { RustStreamError } from "@ruststream/core";
import { catchError, from, isObservable, mergeMap, type Observable, of } from "rxjs";

type Proxied = (...args: unknown[]) => Promise<unknown>;

/** Nest's exception-filter proxy, which `ExternalContextCreator.create` wraps a handler in. */
interface ErrorProxy {
  createProxy(target: Proxied, filters: unknown, type: string): Proxied;
}

/**
 * Nest's `ExternalContextCreator` as `RustStreamModule` wraps a provider's method with it (pipes,
 * guards, interceptors, exception filters), except that an Observable the method (through its
 * interceptors) returns is handed over as it is, for its values to be streamed as the strategy's
 * are: Nest's creator resolves it to its last value (`transformToResult`) and no option of `create`
 * turns that off. Since the values now come after the filters' proxy returned, an error the
 * Observable raises goes through the same filters there: what they make of it (rethrown, or an
 * Observable of their own, such as `of(deadLetter(...))`) continues the stream, as Nest's
 * microservices do for their handlers' Observables.
 *
 * A view over the application's own creator (its prototype): its metadata cache and context
 * creators are shared, only the two members above are its own.
 */
export function streamingContexts(contexts: ExternalContextCreator): ExternalContextCreator {
  const proxy: unknown = Reflect.get(contexts, "externalErrorProxy");
  if (typeof proxy !== "object" || proxy === null || !("createProxy" in proxy)) {
    throw new RustStreamError(
      "unsupported",
      "@ruststream/nestjs: this version of @nestjs/core's ExternalContextCreator has no exception-filter proxy to stream a @Subscriber's Observable through; use NestJS 11 or 12",
    );
  }
  const nestProxy = proxy as ErrorProxy;
  const streamingProxy: ErrorProxy = {
    createProxy(target, filters, type) {
      // The filters applied to an error the Observable raised, with the call's arguments. Only the
      // method's Observable gets this: one a filter returned is the filters' answer already.
      const filtered = (args: unknown[], error: unknown) =>
        from(nestProxy.createProxy(() => Promise.reject(error), filters, type)(...args)).pipe(
          mergeMap((made): Observable<unknown> => (isObservable(made) ? made : of(made))),
        );
      const streaming: Proxied = async (...args) => {
        const result = await target(...args);
        if (!isObservable(result)) return result;
        return result.pipe(catchError((error: unknown) => filtered(args, error)));
      };
      return nestProxy.createProxy(streaming, filters, type);
    },
  };
  return Object.create(contexts, {
    transformToResult: { value: (result: unknown) => Promise.resolve(result) },
    externalErrorProxy: { value: streamingProxy },
  }) as ExternalContextCreator;
}
