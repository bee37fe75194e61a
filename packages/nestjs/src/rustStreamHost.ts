import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type OnModuleInit,
} from "@nestjs/common";
import { DiscoveryService, ExternalContextCreator, MetadataScanner } from "@nestjs/core";
import {
  type HandlerContext,
  type RunningApp,
  type RustStream,
  RustStreamError,
} from "@ruststream/core";
import { AppSlot } from "./appSlot.js";
import { moduleOptionsToken, type RustStreamModuleOptions } from "./moduleOptions.js";
import { mergeOptions, mountPattern } from "./mountPattern.js";
import { paramsMetadataKey, rpcParams } from "./rpcParams.js";
import { nestServing, serveNest } from "./serveNest.js";
import { serviceApp } from "./serviceApp.js";
import { startedApp } from "./startedApp.js";
import { streamingContexts } from "./streamingContexts.js";
import { readSubscriber, type SubscriberDeclaration } from "./subscriberDecorator.js";

type NestHandler = (...args: unknown[]) => Promise<unknown>;
type InstanceWrapper = ReturnType<DiscoveryService["getProviders"]>[number];

/**
 * The RustStream app `RustStreamModule` runs inside the Nest application: built when the module
 * initialises from every `@Subscriber` method of the application's providers and controllers,
 * started when the application bootstraps (unless `start: "manual"`), stopped and drained when it
 * shuts down (`app.close()`, or a signal with `enableShutdownHooks()`). Inject it to publish or
 * request from a provider (`host.unwrap<RunningApp>().publish(...)`).
 */
@Injectable()
export class RustStreamHost implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  readonly #options: RustStreamModuleOptions;
  readonly #discovery: DiscoveryService;
  readonly #scanner: MetadataScanner;
  readonly #contexts: ExternalContextCreator;
  readonly #slot = new AppSlot(
    "the RustStream app runs once the Nest application has bootstrapped (or host.start() resolved)",
  );
  #app: RustStream | undefined;

  constructor(
    options: RustStreamModuleOptions,
    discovery: DiscoveryService,
    scanner: MetadataScanner,
    contexts: ExternalContextCreator,
  ) {
    this.#options = options;
    this.#discovery = discovery;
    this.#scanner = scanner;
    // Nest's creator would resolve a method's Observable to its last value: this one keeps it, so a
    // reply streams each value as the strategy's do.
    this.#contexts = streamingContexts(contexts);
  }

  /** The built app, not started by this call: what `TestApp.start(host.app)` takes. */
  get app(): RustStream {
    if (this.#app === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        "the RustStream app is built when the Nest module initialises: call app.init() (or compile and init the testing module) first",
      );
    }
    return this.#app;
  }

  onModuleInit(): void {
    this.#app = this.#build();
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.#options.start !== "manual") await this.start();
  }

  /** Stops pulling, drains running handlers, shuts the broker down: the first of the shutdown hooks. */
  onModuleDestroy(): Promise<void> {
    return this.#slot.close();
  }

  /** Starts the app (once; bootstrap calls it unless `start: "manual"`). */
  start(): Promise<RunningApp> {
    return this.#slot.start(() => this.app.start());
  }

  /** The running RustStream app (its `publish`, `request`, `whenIdle`, `connection`). */
  unwrap<T>(): T {
    return this.#slot.unwrap<T>();
  }

  #build(): RustStream {
    const options = this.#options;
    const app = serviceApp(options, RustStreamHost.name);
    // Not the slot's app: a test may start this one itself (TestApp.start(host.app)).
    const running = startedApp(app);
    const wrappers = [...this.#discovery.getProviders(), ...this.#discovery.getControllers()];
    app.broker(options.broker, (scope) => {
      for (const wrapper of wrappers) {
        for (const found of this.#subscribersOf(wrapper)) {
          const { name, declaration, handler } = found;
          const own = mergeOptions(options.defaults ?? {}, declaration.options);
          mountPattern(
            scope,
            name,
            { ...own, source: declaration.source },
            declaration.reply,
            (data, ctx) => {
              const { context, serving } = nestServing(
                name,
                declaration.reply,
                own,
                ctx as HandlerContext,
                running,
              );
              return serveNest(() => handler(data, context), serving);
            },
          );
        }
      }
    });
    return app;
  }

  /**
   * The `@Subscriber` methods of one provider, each wrapped as Nest wraps a microservice's handler
   * (pipes, guards, interceptors, exception filters, in Nest's `rpc` context), an Observable kept
   * as one (see `streamingContexts`). Their exceptions reach the runtime as thrown, unless a filter
   * of the application's catches them.
   */
  *#subscribersOf(wrapper: InstanceWrapper): Iterable<{
    readonly name: string;
    readonly declaration: SubscriberDeclaration;
    readonly handler: NestHandler;
  }> {
    const instance: unknown = wrapper.instance;
    if (typeof instance !== "object" || instance === null) return;
    const prototype = Object.getPrototypeOf(instance) as Record<string, unknown> | null;
    for (const method of this.#scanner.getAllMethodNames(prototype)) {
      const declaration = readSubscriber(prototype?.[method]);
      if (declaration === undefined) continue;
      const name = `${wrapper.name === undefined ? "provider" : String(wrapper.name)}.${method}`;
      if (!wrapper.isDependencyTreeStatic()) {
        throw new RustStreamError(
          "invalid-argument",
          `@Subscriber on ${name}: the provider is request-scoped (or depends on one); a subscriber's provider lives as long as the app, so make it a singleton`,
        );
      }
      const callback = prototype?.[method] as (...args: unknown[]) => unknown;
      const handler = this.#contexts.create(
        instance as Record<string, (...args: unknown[]) => unknown>,
        callback,
        method,
        paramsMetadataKey,
        rpcParams,
        undefined,
        undefined,
        { guards: true, interceptors: true, filters: true },
        "rpc",
      ) as NestHandler;
      yield { name, declaration, handler };
    }
  }
}

// The constructor's injection tokens, as `@Inject` on each parameter would record them: named, since
// no build of this package emits parameter types, and applied as calls, since the API reference
// compiles the sources with standard decorators, which have no parameter decorators.
for (const [index, token] of [
  moduleOptionsToken,
  DiscoveryService,
  MetadataScanner,
  ExternalContextCreator,
].entries()) {
  Inject(token)(RustStreamHost, undefined, index);
}
