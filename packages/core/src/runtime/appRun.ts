import type {
  AppInfo,
  Broker,
  ConnectedBroker,
  ConnectionChange,
  ConnectionState,
  ConnectOptions,
} from "../broker/contract.js";
import type { Coordinator } from "../broker/inProcess.js";
import { supportsBatches } from "../capabilities.js";
import type { Clock } from "../clock.js";
import { json } from "../codec/json.js";
import { RustStreamError } from "../errors.js";
import type { Logger } from "../logger.js";
import { brokerMark } from "../marks.js";
import type { OutgoingMessage, Receipt } from "../message.js";
import type { Publisher } from "../publisher.js";
import type { Source } from "../source.js";
import type { Subscription } from "../subscription.js";
import type {
  BackgroundFailureReport,
  BackgroundRecoveryReport,
} from "./backgroundFailureReport.js";
import type { PublishOptionsOf } from "./brokerScope.js";
import type { DeadLetterReport } from "./deadLetterReport.js";
import type { DispatchHost } from "./dispatchHost.js";
import type { Observer } from "./events.js";
import type { BatchMiddleware, ConsumeMiddleware } from "./middleware.js";
import {
  decodedPartials,
  encodedHeaders,
  OutPublisherBase,
  PublishPipeline,
  type PublishRoute,
  runtimeMessage,
} from "./publishing.js";
import type {
  AppPublishOptions,
  AppRequestOptions,
  AppState,
  RunningApp,
  StopReport,
} from "./runningApp.js";
import { SubscriberRuntime } from "./subscriberRuntime.js";
import { defaultMaxAttempts, type SubscriberSpec } from "./subscriberSpec.js";
import { WorkCounter } from "./workCounter.js";

/** One `app.broker(...)` registration. */
export interface BrokerRegistration {
  readonly broker: Broker;
  readonly specs: readonly SubscriberSpec[];
}

export interface AppRunOptions {
  readonly app: AppInfo;
  readonly registrations: readonly BrokerRegistration[];
  readonly logger: Logger;
  readonly clock: Clock;
  readonly coordinator: Coordinator;
  readonly connect: (broker: Broker, options: ConnectOptions) => Promise<ConnectedBroker>;
  readonly observers: readonly Observer[];
  readonly consume: readonly ConsumeMiddleware[];
  readonly consumeBatch: readonly BatchMiddleware[];
  readonly publish: NonNullable<ConstructorParameters<typeof PublishPipeline>[0]>;
  readonly shutdownTimeoutMs: number;
}

interface Connection {
  readonly broker: Broker;
  /** The broker's name in events: its kind, numbered from the second of a kind on. */
  readonly label: string;
  readonly connected: ConnectedBroker;
  /** The broker's default publisher, for `publish`, `request`, replies and copies. */
  readonly route: PublishRoute;
}

function refuse(subscriber: string, message: string): never {
  throw new RustStreamError("invalid-argument", `subscriber "${subscriber}": ${message}`);
}

function sourceName(source: string | Source): string {
  return typeof source === "string" ? source : source.name;
}

/** Whether a source says it can never carry a partition key (a broker opts in by saying so). */
function carriesNoKey(source: Source): boolean {
  return source.carriesPartitionKey === false;
}

/** A started app: owns the connections and the subscriber runtimes, and stops them. */
export class AppRun implements RunningApp, DispatchHost {
  readonly clock: Clock;
  readonly coordinator: Coordinator;
  readonly work = new WorkCounter();
  readonly pipeline: PublishPipeline;
  readonly consume: readonly ConsumeMiddleware[];
  readonly consumeBatch: readonly BatchMiddleware[];
  readonly emit: Observer | undefined;
  readonly stopped: Promise<StopReport>;
  readonly #options: AppRunOptions;
  readonly #log: Logger;
  readonly #abort = new AbortController();
  readonly #connections: Connection[] = [];
  readonly #runtimes: SubscriberRuntime[] = [];
  /** `onStopping` tasks waiting for the stop, then those the stop started (each never rejects). */
  readonly #stopTasks: Array<() => void | Promise<void>> = [];
  readonly #stopTasksRunning: Promise<void>[] = [];
  /** Each connection's state as last emitted, by its label. */
  readonly #reported = new Map<string, ConnectionState>();
  /** The background sources with a failure reported and no recovery since. */
  readonly #failingSources = new Set<string>();
  #state: AppState = "starting";
  #failure: { reason: unknown } | undefined;
  #stopping: Promise<StopReport> | undefined;
  #resolveStopped!: (report: StopReport) => void;

  constructor(options: AppRunOptions) {
    this.#options = options;
    this.#log = options.logger;
    this.clock = options.clock;
    this.coordinator = options.coordinator;
    this.consume = options.consume;
    this.consumeBatch = options.consumeBatch;
    const observers = options.observers;
    this.emit =
      observers.length === 0
        ? undefined
        : (event) => {
            for (const observe of observers) {
              try {
                observe(event);
              } catch (error) {
                this.#log.warn({ error, event: event.type }, "an observer threw; ignoring it");
              }
            }
          };
    this.pipeline = new PublishPipeline(options.publish, this.emit);
    this.stopped = new Promise((resolve) => {
      this.#resolveStopped = resolve;
    });
  }

  get state(): AppState {
    return this.#state;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get brokers(): readonly Broker[] {
    return this.#connections.map((c) => c.broker);
  }

  get subscribers(): readonly string[] {
    return this.#runtimes.map((r) => r.name);
  }

  /**
   * Connects, subscribes and starts pulling; on any failure closes what it opened and rejects. The
   * app stays `starting` until `ready()`, once the startup hooks have run.
   */
  async open(): Promise<void> {
    this.emit?.({ type: "app-state", state: "starting" });
    try {
      await this.#open();
    } catch (error) {
      await this.#teardown();
      this.#state = "stopped";
      this.emit?.({ type: "app-state", state: "stopped", failure: error });
      this.#resolveStopped({ failed: true, failure: error, aborted: false, unflushed: 0 });
      throw error;
    }
  }

  /** Every subscription pulls and the startup hooks have run: a health probe may say ready. */
  ready(): void {
    if (this.#state !== "starting") return;
    this.#state = "ready";
    this.emit?.({ type: "app-state", state: "ready" });
  }

  async #open(): Promise<void> {
    const seen = new Set<string>();
    const wirings: Array<ConstructorParameters<typeof SubscriberRuntime>[1]> = [];
    for (const registration of this.#options.registrations) {
      // Mistakes a mount can show without a connection are refused before anything connects.
      for (const spec of registration.specs) {
        const name = spec.name ?? sourceName(spec.source);
        if (spec.handler === undefined) refuse(name, "no handler: finish it with .handle(fn)");
        if (seen.has(name)) {
          refuse(name, "two subscribers share this name: give one of them .name(...)");
        }
        seen.add(name);
        if (spec.batch !== undefined && spec.key !== undefined) {
          refuse(
            name,
            "keyed lanes cannot take batches: drop the key, or handle one message at a time",
          );
        }
      }
    }
    const kinds = new Map<string, number>();
    for (const registration of this.#options.registrations) {
      const kind = registration.broker[brokerMark];
      const nth = (kinds.get(kind) ?? 0) + 1;
      kinds.set(kind, nth);
      const label = nth === 1 ? kind : `${kind}-${nth}`;
      const connected = await this.#options.connect(registration.broker, {
        app: this.#options.app,
        logger: this.#log,
        onState: (change) => this.#stateChanged(label, kind, change),
        onBackground: {
          failed: (source, error) => this.reportBackgroundFailure({ source, error }),
          recovered: (source) => this.reportBackgroundRecovered({ source }),
        },
      });
      const publisher = (await connected
        .defaultPublishPolicy()
        .pair(connected)) as Publisher<never>;
      const route: PublishRoute = { publisher, broker: kind, label };
      this.#connections.push({ broker: registration.broker, label, connected, route });
      // Where it is as it joins the app (connected, unless the client lost the server meanwhile);
      // changes from here on come through onState.
      this.#reported.set(label, connected.state);
      this.emit?.({ type: "broker-connection", broker: label, kind, state: connected.state });
      for (const spec of registration.specs) {
        const name = spec.name ?? sourceName(spec.source);
        let source: Source =
          typeof spec.source === "string" ? connected.source(spec.source) : spec.source;
        if (spec.key === "partitionKey" && carriesNoKey(source)) {
          refuse(
            name,
            `workers(n, { key: "partitionKey" }) on "${source.name}", which carries no partition key: give a key function of the message instead`,
          );
        }
        if (spec.key === "partition" && source.partitions !== true) {
          refuse(
            name,
            `workers(n, { key: "partition" }) on "${source.name}", whose deliveries come from no broker partition: key by "partitionKey" (the key each message was published with) or by a function of the message`,
          );
        }
        if (source.copies === "broker" && spec.deadLetter !== undefined) {
          // The broker moves failing messages itself; it learns the cap and the destination here.
          source = source.declareRetry({
            maxAttempts: spec.maxAttempts ?? defaultMaxAttempts,
            deadLetter: spec.deadLetter,
          });
        }
        const subscription: Subscription = await connected.subscribe(source);
        if (spec.batch !== undefined && !supportsBatches(subscription)) {
          await subscription.close();
          refuse(name, `batch(${spec.batch}): this broker hands over one delivery at a time`);
        }
        const out: Record<string, OutPublisherBase> = {};
        for (const [key, declaration] of Object.entries(spec.outs)) {
          out[key] = new OutPublisherBase(
            declaration.name,
            declaration.codec ?? spec.codec,
            route,
            this.pipeline,
          );
        }
        wirings.push({
          spec,
          name,
          source,
          subscription,
          route,
          out,
          log: this.#log.child({ subscriber: name }),
        });
      }
    }
    for (const wiring of wirings) {
      const runtime = new SubscriberRuntime(this, wiring);
      this.#runtimes.push(runtime);
    }
    for (const runtime of this.#runtimes) runtime.start();
  }

  connection(broker?: Broker): ConnectedBroker {
    return this.#connectionOf(broker).connected;
  }

  #connectionOf(broker: Broker | undefined): Connection {
    const found =
      broker === undefined
        ? this.#connections[0]
        : this.#connections.find((c) => c.broker === broker);
    if (found === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        broker === undefined
          ? "the app has no broker: register one with app.broker(...)"
          : "that broker is not registered with this app: pass one given to app.broker(...)",
      );
    }
    return found;
  }

  async publish(name: string, value: unknown, options: AppPublishOptions = {}): Promise<Receipt> {
    this.#assertRunning("publish");
    const { route } = this.#connectionOf(options.broker);
    const codec = options.codec ?? json;
    const headers = encodedHeaders(codec, options.headers);
    const message = runtimeMessage(name, codec.encode(value), headers, options, undefined);
    return this.pipeline.publish(route, message as OutgoingMessage, "app");
  }

  publisher<TBroker extends Broker>(broker?: TBroker): Publisher<PublishOptionsOf<TBroker>> {
    this.#assertRunning("publisher");
    const { route } = this.#connectionOf(broker);
    return {
      publish: async (message) => {
        this.#assertRunning("publish");
        return this.pipeline.publish(route, message as OutgoingMessage, "app");
      },
    };
  }

  onStopping(task: () => void | Promise<void>): void {
    if (typeof task !== "function") {
      throw new RustStreamError(
        "invalid-argument",
        "onStopping(task) needs a function, for example () => relay.stop()",
      );
    }
    this.#assertRunning("onStopping");
    if (this.#state === "stopping") this.#stopTasksRunning.push(this.#runStopTask(task));
    else this.#stopTasks.push(task);
  }

  reportDeadLetter(report: DeadLetterReport): void {
    const { subscriber, delivery, destination, reason, movedBy } = report ?? {};
    if (
      typeof subscriber !== "string" ||
      subscriber === "" ||
      typeof destination !== "string" ||
      destination === "" ||
      typeof reason !== "string" ||
      typeof delivery !== "object" ||
      delivery === null ||
      (movedBy !== "runtime" && movedBy !== "broker")
    ) {
      throw new RustStreamError(
        "invalid-argument",
        'reportDeadLetter(report) needs { subscriber, delivery, destination, reason, movedBy }, for example { subscriber: "outbox:kafka", delivery, destination: "kafka.dead", reason: "max-attempts", movedBy: "broker" }',
      );
    }
    this.emit?.({ type: "dead-letter", subscriber, delivery, destination, reason, movedBy });
  }

  reportBackgroundFailure(report: BackgroundFailureReport): void {
    const { source, error } = report ?? {};
    if (typeof source !== "string" || source === "" || error === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        'reportBackgroundFailure(report) needs { source, error }, for example { source: "outbox:kafka", error }',
      );
    }
    this.#failingSources.add(source);
    this.emit?.({ type: "background-failure", source, error });
  }

  reportBackgroundRecovered(report: BackgroundRecoveryReport): void {
    const { source } = report ?? {};
    if (typeof source !== "string" || source === "") {
      throw new RustStreamError(
        "invalid-argument",
        'reportBackgroundRecovered(report) needs { source }, the one its failures named, for example { source: "outbox:kafka" }',
      );
    }
    if (!this.#failingSources.delete(source)) return;
    this.emit?.({ type: "background-recovered", source });
  }

  /** Runs one `onStopping` task; what it throws is logged, and the stop goes on. */
  async #runStopTask(task: () => void | Promise<void>): Promise<void> {
    try {
      await task();
    } catch (error) {
      this.#log.error({ error }, "an onStopping task failed; the app stops anyway");
    }
  }

  async request(name: string, value: unknown, options: AppRequestOptions): Promise<unknown> {
    this.#assertRunning("request");
    const { route } = this.#connectionOf(options.broker);
    const codec = options.codec ?? json;
    const headers = encodedHeaders(codec, options.headers);
    const message = runtimeMessage(name, codec.encode(value), headers, options, undefined);
    const reply = await this.pipeline.request(
      route,
      message as OutgoingMessage,
      options.timeoutMs,
      decodedPartials(codec, options),
    );
    return codec.decode(reply.payload);
  }

  #assertRunning(what: string): void {
    if (this.#state === "stopped") {
      throw new RustStreamError(
        "closed",
        `${what}() on an app that has stopped: start it again (app.start()) and use the new running app`,
      );
    }
  }

  get inFlight(): number {
    return this.work.count;
  }

  whenIdle(): Promise<void> {
    return this.work.whenZero();
  }

  failFast(subscriber: string, reason: unknown): void {
    if (this.#failure !== undefined || this.#state === "stopped") return;
    this.#failure = { reason };
    this.#log.error({ subscriber, error: reason }, "fail-fast: stopping the app");
    void this.stop();
  }

  stop(): Promise<StopReport> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<StopReport> {
    this.#state = "stopping";
    this.emit?.({ type: "app-state", state: "stopping" });
    const timeout = this.#options.shutdownTimeoutMs;
    // Started with the stop, beside the drain, and bounded by the same timeout from here (real time,
    // as the drain's is).
    const tasksDeadline = Date.now() + timeout;
    for (const task of this.#stopTasks.splice(0)) {
      this.#stopTasksRunning.push(this.#runStopTask(task));
    }
    await Promise.all(this.#runtimes.map((runtime) => runtime.stop()));
    for (const runtime of this.#runtimes) runtime.flushCopies();
    let aborted = false;
    if (!(await drainWithin(this.work, timeout))) {
      aborted = true;
      this.#log.warn(
        { running: this.work.count, timeoutMs: timeout },
        "handlers still running at the drain timeout; aborting them through ctx.signal",
      );
      this.#abort.abort(
        new RustStreamError(
          "timeout",
          `the app is shutting down and its drain timeout (${timeout} ms) ran out: return from the handler`,
        ),
      );
      // A short grace for handlers that listen to the signal; those that do not are left behind.
      await drainWithin(this.work, Math.min(timeout, 1000));
    }
    // Read now, so a task added while the app was stopping is waited for too.
    if (!(await settleWithin(this.#stopTasksRunning, Math.max(0, tasksDeadline - Date.now())))) {
      this.#log.warn(
        { timeoutMs: timeout },
        "onStopping tasks still running at the shutdown timeout; closing the connections under them",
      );
    }
    const unflushed = await this.#teardown();
    this.#state = "stopped";
    const failure = this.#failure;
    this.emit?.({
      type: "app-state",
      state: "stopped",
      ...(failure === undefined ? {} : { failure: failure.reason }),
    });
    const report: StopReport = {
      failed: failure !== undefined,
      ...(failure === undefined ? {} : { failure: failure.reason }),
      aborted,
      unflushed,
    };
    this.#resolveStopped(report);
    return report;
  }

  async #teardown(): Promise<number> {
    let unflushed = 0;
    for (const { connected, label, route } of this.#connections) {
      try {
        unflushed += (await connected.shutdown()).unflushed;
      } catch (error) {
        this.#log.error({ error }, "a broker failed to shut down cleanly");
      }
      // A broker built on core's ConnectionBase reported `closed` as its shutdown began.
      this.#stateChanged(label, route.broker, { state: "closed" });
    }
    return unflushed;
  }

  /**
   * A connection's state changed: logged, and emitted as `broker-connection` when it differs from
   * the last one emitted. Ignored before the connection joined the app (its state is read then).
   */
  #stateChanged(label: string, kind: string, change: ConnectionChange): void {
    const last = this.#reported.get(label);
    if (last === undefined || last === change.state) return;
    this.#reported.set(label, change.state);
    const { state, reason } = change;
    if (state === "reconnecting" || state === "lost") {
      this.#log.warn(
        { broker: label, state, reason },
        state === "lost"
          ? "broker connection lost: its client gave up or is refused for good (see the reason; a restart with the cause fixed is the cure)"
          : "broker connection down: its client is reconnecting",
      );
    } else if (state === "connected") {
      this.#log.info({ broker: label, state }, "broker connection back");
    }
    this.emit?.({
      type: "broker-connection",
      broker: label,
      kind,
      state,
      ...(reason === undefined ? {} : { reason }),
    });
  }
}

/** Whether `tasks` (none of which rejects) ended within `ms` of real time. */
function settleWithin(tasks: readonly Promise<void>[], ms: number): Promise<boolean> {
  if (tasks.length === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    Promise.all(tasks).then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

// Real time on purpose: the drain timeout bounds how long a process takes to exit, which a test's
// manual clock must not be able to stretch forever.
function drainWithin(work: WorkCounter, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    work.whenZero().then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
