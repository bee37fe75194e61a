import { RustStream, RustStreamError } from "@ruststream/core";
import { nestLogger } from "./nestLogger.js";
import { assertKnownKeys } from "./patternOptions.js";
import type { RustStreamServerOptions } from "./serverOptions.js";

/**
 * Refuses what the strategy's or the module's options cannot run with, naming the fix: `what` is
 * how the caller made them (`new RustStreamServer(...)`, `RustStreamModule.forRoot(...)`).
 */
export function assertServiceOptions(what: string, options: RustStreamServerOptions): void {
  if (typeof options !== "object" || options === null || options.broker === undefined) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}({ broker, name }) needs a broker, for example new RedisBroker({ url })`,
    );
  }
  if (typeof options.name !== "string" || options.name.length === 0) {
    throw new RustStreamError(
      "invalid-argument",
      `${what}({ broker, name }) needs the service's name (consumer groups derive from it)`,
    );
  }
  if (options.defaults !== undefined) assertKnownKeys(`${what} defaults`, options.defaults);
}

/** The service's RustStream app, logging through Nest's logger in `context` unless given one. */
export function serviceApp(options: RustStreamServerOptions, context: string): RustStream {
  return new RustStream({
    name: options.name,
    version: options.version ?? "0.0.0",
    logger: options.logger ?? nestLogger(context),
    ...(options.shutdownTimeoutMs === undefined
      ? {}
      : { shutdownTimeoutMs: options.shutdownTimeoutMs }),
  });
}
