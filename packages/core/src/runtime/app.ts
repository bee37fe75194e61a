import type { AppInfo, Broker, ConnectedBroker, ConnectOptions } from "../broker/contract.js";
import { brokerKind } from "../broker/contract.js";
import { type Coordinator, noCoordinator } from "../broker/inProcess.js";
import { type Clock, systemClock } from "../clock.js";
import { RustStreamError } from "../errors.js";
import { consoleLogger, type Logger, silentLogger } from "../logger.js";
import { AppRun, type BrokerRegistration } from "./appRun.js";
import { BrokerScope } from "./brokerScope.js";
import { type AppDescription, describeApp } from "./description.js";
import type { Observer } from "./events.js";
import type {
  BatchMiddleware,
  ConsumeMiddleware,
  Middleware,
  PublishMiddleware,
} from "./middleware.js";
import type { RunningApp } from "./runningApp.js";
import type { SubscriberSpec } from "./subscriberSpec.js";

export interface RustStreamOptions extends AppInfo {
  /** Default: silent under `start()`, readable lines on stderr under `run()`. */
  readonly logger?: Logger;
  /** How long shutdown waits for running handlers before aborting them (default 10 000 ms). */
  readonly shutdownTimeoutMs?: number;
}

/** How to start: the defaults are production's; a test harness overrides them. */
export interface StartOptions {
  readonly logger?: Logger;
  /** Time for retry delays and copies (default: real time). */
  readonly clock?: Clock;
  /**
   * The in-process harness's coordinator, told when a delivery is held for a delayed retry copy
   * (default: told nothing). The same one the harness gives its in-process connections.
   */
  readonly coordinator?: Coordinator;
  /**
   * Connects each broker (default `broker.connect(options)`, the options naming the app); a harness
   * connects in-process instead, passing the options on.
   */
  readonly connect?: (broker: Broker, options: ConnectOptions) => Promise<ConnectedBroker>;
  /** Observers for this run only, beside those given to `app.observe`. */
  readonly observers?: readonly Observer[];
}

/**
 * A signal `run()` can stop on: the ones a process is sent to end it, and the user signals. Our own
 * union rather than Node's `NodeJS.Signals`, so the published types compile without @types/node;
 * SIGKILL and SIGSTOP are left out because a process cannot listen for them.
 */
export type StopSignal =
  | "SIGTERM"
  | "SIGINT"
  | "SIGHUP"
  | "SIGQUIT"
  | "SIGUSR1"
  | "SIGUSR2"
  | "SIGBREAK";

export interface RunOptions {
  readonly logger?: Logger;
  /** The signals that stop the app (default SIGTERM and SIGINT). */
  readonly signals?: readonly StopSignal[];
  /** Stops the app when it settles, as a signal would (a demo, a one-shot job). */
  readonly until?: PromiseLike<unknown>;
  /** Ends the process with the exit code once stopped (default true). */
  readonly exit?: boolean;
}

/** A startup task: runs once the subscriptions are open, before `start()` resolves. */
export type StartupHook = (running: RunningApp) => void | Promise<void>;

/**
 * A messaging service: brokers, the handlers mounted on them, middleware and observers. Building
 * it does no I/O; `start()` connects and serves, `run()` does that as the process's main loop.
 */
export class RustStream {
  readonly info: AppInfo;
  readonly #options: RustStreamOptions;
  readonly #registrations: BrokerRegistration[] = [];
  readonly #observers: Observer[] = [];
  readonly #consume: ConsumeMiddleware[] = [];
  readonly #consumeBatch: BatchMiddleware[] = [];
  readonly #publish: PublishMiddleware[] = [];
  readonly #hooks: StartupHook[] = [];

  constructor(options: RustStreamOptions) {
    if (typeof options?.name !== "string" || options.name === "") {
      throw new RustStreamError(
        "invalid-argument",
        'new RustStream({ name, version }) needs a name, for example { name: "orders", version: "1.0.0" }',
      );
    }
    const timeout = options.shutdownTimeoutMs;
    if (timeout !== undefined && !(Number.isFinite(timeout) && timeout >= 0)) {
      throw new RustStreamError(
        "invalid-argument",
        `shutdownTimeoutMs: ${timeout}; give a finite number of milliseconds, 0 or more`,
      );
    }
    this.info = { name: options.name, version: options.version };
    this.#options = options;
  }

  /** Registers a broker and, in `configure`, the subscribers on it. */
  broker<TBroker extends Broker>(
    broker: TBroker,
    configure?: (scope: BrokerScope<TBroker>) => void,
  ): this {
    if (brokerKind(broker) === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        "app.broker() needs a broker, for example new MemoryBroker()",
      );
    }
    if (this.#registrations.some((r) => r.broker === broker)) {
      throw new RustStreamError(
        "invalid-argument",
        "this broker is already registered: mount all its subscribers in one app.broker(...) call",
      );
    }
    const specs: SubscriberSpec[] = [];
    configure?.(new BrokerScope(broker, specs));
    this.#registrations.push({ broker, specs });
    return this;
  }

  /**
   * What the app is, without connecting: its brokers and their servers (never with credentials),
   * and each subscriber's source, message, reply, publishers and settings. A documentation generator
   * and a health endpoint read it.
   */
  describe(): AppDescription {
    return describeApp(this.info, this.#registrations);
  }

  /** Adds consume and publish middleware; the first added runs outermost. */
  use(middleware: Middleware): this {
    if (middleware.consume !== undefined) this.#consume.push(middleware.consume);
    if (middleware.consumeBatch !== undefined) this.#consumeBatch.push(middleware.consumeBatch);
    if (middleware.publish !== undefined) this.#publish.push(middleware.publish);
    return this;
  }

  /** Adds an observer of runtime events; returns a function that removes it (for later starts). */
  observe(observer: Observer): () => void {
    this.#observers.push(observer);
    return () => {
      const i = this.#observers.indexOf(observer);
      if (i >= 0) this.#observers.splice(i, 1);
    };
  }

  /** Runs `hook` once subscriptions are open; a hook that throws aborts the start. */
  afterStartup(hook: StartupHook): this {
    this.#hooks.push(hook);
    return this;
  }

  /** Connects every broker, opens every subscription and serves; resolves once ready. */
  async start(options: StartOptions = {}): Promise<RunningApp> {
    return this.#start(options, () => {});
  }

  /** `onReady` runs once the subscriptions are open, before the startup hooks publish anything. */
  async #start(options: StartOptions, onReady: (run: RunningApp) => void): Promise<RunningApp> {
    if (this.#registrations.length === 0) {
      throw new RustStreamError(
        "invalid-argument",
        `app "${this.info.name}" has no broker: register one with app.broker(new MemoryBroker(), (b) => ...)`,
      );
    }
    const run = new AppRun({
      registrations: this.#registrations.map((r) => ({ broker: r.broker, specs: [...r.specs] })),
      logger: options.logger ?? this.#options.logger ?? silentLogger,
      clock: options.clock ?? systemClock,
      coordinator: options.coordinator ?? noCoordinator,
      app: this.info,
      connect: options.connect ?? ((broker, connectOptions) => broker.connect(connectOptions)),
      observers: [...this.#observers, ...(options.observers ?? [])],
      consume: [...this.#consume],
      consumeBatch: [...this.#consumeBatch],
      publish: [...this.#publish],
      shutdownTimeoutMs: this.#options.shutdownTimeoutMs ?? 10_000,
    });
    await run.open();
    onReady(run);
    try {
      for (const hook of this.#hooks) await hook(run);
    } catch (error) {
      await run.stop();
      throw error;
    }
    run.ready();
    return run;
  }

  /**
   * Runs the app as the process: starts, serves until SIGTERM/SIGINT (or `until`), stops gracefully
   * and exits 0, or 1 when startup failed or a fail-fast policy fired. A second signal exits at once.
   */
  async run(options: RunOptions = {}): Promise<number> {
    const log = options.logger ?? this.#options.logger ?? consoleLogger();
    const exit = options.exit ?? true;
    const finish = (code: number): number => {
      if (exit) process.exit(code);
      return code;
    };
    let running: RunningApp;
    try {
      running = await this.#start({ logger: log }, (opened) =>
        log.info(
          {
            app: this.info.name,
            version: this.info.version,
            subscribers: opened.subscribers.join(","),
          },
          "ready",
        ),
      );
    } catch (error) {
      log.error({ error }, "startup failed");
      return finish(1);
    }
    const signals: readonly StopSignal[] = options.signals ?? ["SIGTERM", "SIGINT"];
    let onSignal: (signal: StopSignal) => void = () => {};
    const signalled = new Promise<string>((resolve) => {
      let seen = false;
      onSignal = (signal) => {
        if (seen) {
          log.warn({ signal }, "second signal: exiting without waiting");
          finish(1);
          return;
        }
        seen = true;
        resolve(signal);
      };
    });
    for (const signal of signals) process.on(signal, onSignal);
    try {
      const why = await Promise.race([
        signalled.then((signal) => `signal ${signal}`),
        running.stopped.then(() => "failure"),
        ...(options.until === undefined
          ? []
          : [
              Promise.resolve(options.until).then(
                () => "done",
                () => "done",
              ),
            ]),
      ]);
      log.info({ reason: why }, "stopping");
      const report = await running.stop();
      log.info(
        { failed: report.failed, aborted: report.aborted, unflushed: report.unflushed },
        "stopped",
      );
      return finish(report.failed ? 1 : 0);
    } finally {
      for (const signal of signals) process.off(signal, onSignal);
    }
  }
}
