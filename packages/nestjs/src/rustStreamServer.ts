import { type CustomTransportStrategy, type MessageHandler, Server } from "@nestjs/microservices";
import {
  type ConnectionState,
  type HandlerContext,
  type RunningApp,
  RustStreamError,
} from "@ruststream/core";
import { AppSlot } from "./appSlot.js";
import { mergeOptions, mountPattern } from "./mountPattern.js";
import { type PatternExtras, readPatternExtras } from "./patternOptions.js";
import { assertRegExpSource, regExpPatternName } from "./regExpPattern.js";
import { nestServing, serveNest } from "./serveNest.js";
import type { RustStreamServerOptions } from "./serverOptions.js";
import { assertServiceOptions, serviceApp } from "./serviceApp.js";
import { startedApp } from "./startedApp.js";
import { rustStreamTransport } from "./transport.js";

/**
 * A Nest microservice transport on any RustStream broker:
 * `NestFactory.createMicroservice(AppModule, { strategy: new RustStreamServer({ broker, name }) })`.
 * Each `@EventPattern` and `@MessagePattern` becomes a subscriber of a RustStream app the strategy
 * starts in `listen` and stops in `close`, so retries with backoff, dead letters, keyed lanes and
 * acks after the work come from the runtime. Nest wraps each handler in its pipes, guards,
 * interceptors and exception filters before the strategy gets it, as for its own transports. A
 * handler that throws, or whose Observable errors, is a failed attempt; what a `@MessagePattern`
 * handler returns is the reply to the message's `reply-to` (an Observable's values one by one to
 * a `ClientRustStream.send`, else its last value), and its failure the error reply.
 */
export class RustStreamServer
  extends Server<Record<string, never>, ConnectionState>
  implements CustomTransportStrategy
{
  override transportId = rustStreamTransport;
  /** The runtime counts and logs an event handler's failure, so Nest need not report it too. */
  override readonly propagatesEventHandlerErrors = true;
  readonly #options: RustStreamServerOptions;
  readonly #app = new AppSlot(
    "the RustStream app runs once the microservice listens: call unwrap() after app.listen()",
  );

  /** The names of the patterns Nest gave as regular expressions (see `addHandler`). */
  readonly #regExpPatterns = new Set<string>();

  constructor(options: RustStreamServerOptions) {
    super();
    assertServiceOptions("new RustStreamServer", options);
    this.#options = options;
  }

  /**
   * Registers one pattern's handler; Nest calls it for each. A regular expression is kept by its
   * name (`/orders\..+/`): Nest would make it the JSON of an object with no keys, `{}`. It needs
   * a `source` in its extras, the broker's own wildcard subscription (refused at `listen()`
   * without one): no RustStream broker subscribes by regular expression.
   */
  override addHandler(
    pattern: unknown,
    callback: MessageHandler,
    isEventHandler?: boolean,
    extras?: Record<string, unknown>,
  ): void {
    if (!(pattern instanceof RegExp)) {
      super.addHandler(pattern, callback, isEventHandler, extras);
      return;
    }
    const name = regExpPatternName(pattern);
    this.#regExpPatterns.add(name);
    super.addHandler(name, callback, isEventHandler, extras);
  }

  /** Builds the app from the registered handlers and starts it; Nest calls it in `listen()`. */
  listen(callback: (error?: unknown) => void): void {
    this.#app
      .start(() => this.#start())
      .then(
        () => callback(),
        (error: unknown) => callback(error),
      );
  }

  /**
   * Stops the app: stops pulling, drains running handlers, shuts the broker down. A close while
   * the app still starts waits for it, so nothing it opens is left running.
   */
  close(): Promise<void> {
    return this.#app.close();
  }

  /** The running RustStream app (its `publish`, `request`, `whenIdle`, `connection`). */
  unwrap<T>(): T {
    return this.#app.unwrap<T>();
  }

  /** Nest's transport events are not emitted: observe `status`, or the app through `unwrap()`. */
  on(): never {
    throw new RustStreamError(
      "unsupported",
      "RustStreamServer emits no transport events: subscribe to server.status for the connection state",
    );
  }

  async #start(): Promise<RunningApp> {
    const options = this.#options;
    const defaults = options.defaults ?? {};
    const app = serviceApp(options, RustStreamServer.name);
    const running = startedApp(app);
    app.broker(options.broker, (scope) => {
      for (const [pattern, handler] of this.getHandlers()) {
        const own = readPatternExtras(pattern, handler.extras);
        if (this.#regExpPatterns.has(pattern)) assertRegExpSource(pattern, own);
        const replies = handler.isEventHandler !== true;
        const options = mergeOptions(defaults, own);
        mountPattern(scope, pattern, options, replies, (data, ctx) =>
          this.#serve(pattern, handler, options, data, ctx as HandlerContext, replies, running),
        );
      }
    });
    app.observe((event) => {
      if (event.type === "broker-connection") this._status$.next(event.state);
    });
    return app.start();
  }

  /**
   * Runs one Nest handler as the runtime's handler, between Nest's processing hooks (see
   * `serveNest` for what its result and its failure become).
   */
  #serve(
    pattern: string,
    handler: MessageHandler,
    options: PatternExtras,
    data: unknown,
    ctx: HandlerContext,
    replies: boolean,
    running: () => Promise<RunningApp>,
  ): Promise<unknown> {
    const { context, serving } = nestServing(pattern, replies, options, ctx, running);
    return new Promise((resolve, reject) => {
      this.onProcessingStartHook(this.transportId, context, () =>
        serveNest(() => handler(data, context), serving)
          .finally(() => this.onProcessingEndHook?.(this.transportId, context))
          .then(resolve, reject),
      );
    });
  }
}
