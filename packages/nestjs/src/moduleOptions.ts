import type { ModuleMetadata } from "@nestjs/common";
import type { RustStreamServerOptions } from "./serverOptions.js";

/** What `RustStreamModule.forRoot(options)` takes: the strategy's options, and when to start. */
export interface RustStreamModuleOptions extends RustStreamServerOptions {
  /**
   * `"bootstrap"` (default): the app starts when the Nest application bootstraps. `"manual"`: it is
   * built but not started, for a test that runs it under `TestApp.start(host.app)`, or a service
   * that calls `host.start()` itself.
   */
  readonly start?: "bootstrap" | "manual";
}

/** What `RustStreamModule.forRootAsync(options)` takes: the options from a factory with injection. */
export interface RustStreamModuleAsyncOptions {
  /** Modules whose providers the factory injects (a config module, say). */
  readonly imports?: ModuleMetadata["imports"];
  /** The tokens whose values the factory is called with, in order. */
  readonly inject?: readonly (string | symbol | (abstract new (...args: never[]) => unknown))[];
  readonly useFactory: (
    ...args: never[]
  ) => RustStreamModuleOptions | Promise<RustStreamModuleOptions>;
}

/** The injection token of the module's options. */
export const moduleOptionsToken: unique symbol = Symbol.for("@ruststream/nestjs.moduleOptions");
