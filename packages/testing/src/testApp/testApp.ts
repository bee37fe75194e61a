import {
  type Broker,
  bytes,
  type Codec,
  type HeaderInit,
  HeaderMap,
  headerNames,
  json,
  ManualClock,
  type OutcomeEvent,
  type RawMessage,
  type RunningApp,
  type RuntimeEvent,
  type RustStream,
  RustStreamError,
  type StopReport,
} from "@ruststream/core";
import {
  CountingCoordinator,
  isTestableBroker,
  snapshotMessage,
  supportsInProcess,
} from "@ruststream/core/broker";
import { sleep } from "../helpers/sleep.js";
import { LiveLedger } from "./liveLedger.js";
import { PublishedMessage } from "./publishedMessage.js";
import { SubscriberProbe, unknownSubscriber } from "./subscriberProbe.js";

export interface TestAppOptions {
  /** The clock retries and delays run on (default a new `ManualClock` at 0). */
  readonly clock?: ManualClock;
  /**
   * Real-time bound on waiting for a reaction to finish (default 5000 ms): past it, `publish`,
   * `settle` and `advance` reject with code `timeout` instead of hanging on a handler that never
   * returns.
   */
  readonly timeoutMs?: number;
}

export interface LiveOptions {
  /** Real-time bound on each wait (default 10 000 ms). */
  readonly withinMs?: number;
}

export interface TestPublishOptions {
  readonly headers?: HeaderInit;
  readonly partitionKey?: string | Uint8Array;
  /** The broker to publish on (default the app's first). */
  readonly broker?: Broker;
  /** Default JSON. */
  readonly codec?: Codec<unknown>;
}

interface Mode {
  /** Resolves once the reaction to what the test did is over. */
  quiesce(): Promise<void>;
  inject(broker: Broker | undefined, message: RawMessage): Promise<void>;
  published(name: string): readonly RawMessage[];
}

/**
 * Runs a production app in a test. `TestApp.start(app)` connects every broker in-process (no server,
 * the test's clock), and each `publish` returns once the whole reaction (handlers, replies, cascades,
 * immediate retries) is over, so the test asserts right after it. `TestApp.startLive(app)` runs the
 * same test body against the real brokers, waiting a bounded time instead.
 */
export class TestApp {
  /** The running app, for anything the harness does not wrap. */
  readonly running: RunningApp;
  /** The clock retries run on; move it with `advance`. Real time in live mode. */
  readonly clock: ManualClock | undefined;
  readonly #events: RuntimeEvent[];
  readonly #mode: Mode;

  private constructor(
    running: RunningApp,
    clock: ManualClock | undefined,
    events: RuntimeEvent[],
    mode: Mode,
  ) {
    this.running = running;
    this.clock = clock;
    this.#events = events;
    this.#mode = mode;
  }

  /** Starts `app` on the in-process transports of its brokers. */
  static async start(app: RustStream, options: TestAppOptions = {}): Promise<TestApp> {
    const clock = options.clock ?? new ManualClock();
    const coordinator = new CountingCoordinator();
    const timeoutMs = options.timeoutMs ?? 5000;
    const events: RuntimeEvent[] = [];
    const running = await app.start({
      clock,
      coordinator,
      observers: [(event) => events.push(event)],
      connect: async (broker, connectOptions) => {
        if (!supportsInProcess(broker)) {
          throw new RustStreamError(
            "unsupported",
            `the ${String(broker.constructor.name)} broker has no in-process mode: test with TestApp.startLive(app) against a real server`,
          );
        }
        return broker.connectInProcess({ ...connectOptions, coordinator, clock });
      },
    });
    const testable = (broker: Broker | undefined) => {
      const connected = running.connection(broker);
      if (!isTestableBroker(connected)) {
        throw new RustStreamError(
          "unsupported",
          "this broker's in-process connection cannot be driven by a test: its package must expose TestableBroker",
        );
      }
      return connected;
    };
    const mode: Mode = {
      quiesce: () => quiesceInProcess(running, coordinator, timeoutMs),
      async inject(broker, message) {
        testable(broker).inject({
          name: message.name,
          payload: message.payload,
          headers: message.headers,
          ...(message.partitionKey === undefined ? {} : { partitionKey: message.partitionKey }),
        });
      },
      published(name) {
        return running.brokers.flatMap((broker) => [...testable(broker).published(name)]);
      },
    };
    const test = new TestApp(running, clock, events, mode);
    await test.settle();
    return test;
  }

  /**
   * Starts `app` against its real brokers. `publish` goes through the app's own publisher and waits
   * (at most `withinMs`) until everything the app published to a name it reads has been settled for
   * good and no handler runs (see `LiveLedger`); `published` lists what the app itself published.
   */
  static async startLive(app: RustStream, options: LiveOptions = {}): Promise<TestApp> {
    const withinMs = options.withinMs ?? 10_000;
    const events: RuntimeEvent[] = [];
    const ledger = new LiveLedger(app.describe());
    const running = await app.start({
      observers: [
        (event) => {
          events.push(event);
          ledger.observe(event);
        },
      ],
    });
    const mode: Mode = {
      quiesce: () => quiesceLive(running, ledger, withinMs),
      async inject(broker, message) {
        await running.publish(message.name, message.payload, {
          ...(broker === undefined ? {} : { broker }),
          headers: message.headers,
          ...(message.partitionKey === undefined ? {} : { partitionKey: message.partitionKey }),
          codec: bytes as Codec<unknown>,
        });
      },
      published(name) {
        return events.flatMap((event) =>
          event.type === "publish" && event.ok && event.name === name
            ? [snapshotMessage(event.message)]
            : [],
        );
      },
    };
    return new TestApp(running, undefined, events, mode);
  }

  /** Publishes `value` (encoded, default JSON) to `name` and waits for the whole reaction. */
  async publish(name: string, value: unknown, options: TestPublishOptions = {}): Promise<void> {
    const codec = options.codec ?? json;
    const headers = new HeaderMap(options.headers ?? []);
    if (!headers.has(headerNames.contentType))
      headers.set(headerNames.contentType, codec.contentType);
    await this.publishRaw(name, codec.encode(value), { ...options, headers });
  }

  /** Publishes bytes (or text as UTF-8) as they are: for payloads no codec would produce. */
  async publishRaw(
    name: string,
    payload: Uint8Array | string,
    options: Omit<TestPublishOptions, "codec"> = {},
  ): Promise<void> {
    const bytes = typeof payload === "string" ? new TextEncoder().encode(payload) : payload;
    await this.#mode.inject(
      options.broker,
      snapshotMessage({
        name,
        payload: bytes,
        headers: new HeaderMap(options.headers ?? []),
        partitionKey: options.partitionKey,
      }),
    );
    await this.#mode.quiesce();
  }

  /** Sends a request through the app's broker and resolves with the decoded reply. */
  async request(
    name: string,
    value: unknown,
    options: { readonly timeoutMs?: number; readonly broker?: Broker } = {},
  ): Promise<unknown> {
    const reply = this.running.request(name, value, {
      timeoutMs: options.timeoutMs ?? 5000,
      ...(options.broker === undefined ? {} : { broker: options.broker }),
    });
    // The reply may fail while the reaction is waited for (its timeout fired by an `advance` the
    // test runs meanwhile): the caller still gets the rejection, but it is not reported as unhandled.
    reply.catch(() => {});
    await this.#mode.quiesce();
    return reply;
  }

  /** Waits until nothing is in flight. */
  settle(): Promise<void> {
    return this.#mode.quiesce();
  }

  /** Moves the test clock forward (firing due retries) and waits for the reaction. */
  async advance(ms: number): Promise<void> {
    if (this.clock === undefined) {
      await sleep(ms);
    } else {
      this.clock.advance(ms);
    }
    await this.#mode.quiesce();
  }

  /** What one subscriber did, by its name (the source's name unless `.name()` set one). */
  subscriber(name: string): SubscriberProbe {
    if (!this.running.subscribers.includes(name)) {
      throw unknownSubscriber(name, this.running.subscribers);
    }
    const outcomes = this.#events.filter(
      (event): event is OutcomeEvent => event.type === "outcome" && event.subscriber === name,
    );
    return new SubscriberProbe(name, outcomes);
  }

  /** Everything published to `name`, test injections included, decoded with `codec` (default JSON). */
  published(name: string, options: { readonly codec?: Codec<unknown> } = {}): PublishedMessage[] {
    return this.#mode.published(name).map((raw) => new PublishedMessage(raw, options.codec));
  }

  /** Every runtime event so far, for assertions the probes do not cover. */
  get events(): readonly RuntimeEvent[] {
    return this.#events;
  }

  /** Throws when a fail-fast policy has stopped the app. */
  assertRunning(): void {
    const state = this.running.state;
    if (state !== "ready") {
      throw new RustStreamError(
        "closed",
        `the app is ${state}, not running: a fail-fast policy fired, or it was stopped`,
      );
    }
  }

  /** Stops the app; resolves with what stopping found. */
  stop(): Promise<StopReport> {
    return this.running.stop();
  }
}

/**
 * Live, the reaction is over when the ledger owes nothing and no handler, reply or settle is in
 * progress, and both hold across a short pause (a settle's callback may publish the next message of
 * a cascade, whose confirmation comes over the network).
 */
async function quiesceLive(
  running: RunningApp,
  ledger: LiveLedger,
  withinMs: number,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (running.state === "stopped" || running.state === "stopping") return;
    const idle = await Promise.race([
      running.whenIdle().then(() => true),
      sleep(Math.max(0, deadline - Date.now())).then(() => false),
    ]);
    if (idle && ledger.outstanding === 0) {
      await sleep(10);
      if (ledger.outstanding === 0 && running.inFlight === 0) return;
      continue;
    }
    if (Date.now() >= deadline) {
      const owed = ledger.describeOutstanding();
      throw new RustStreamError(
        "timeout",
        `the reaction was not over after ${withinMs} ms: ${running.inFlight} in a handler, still owed ${owed === "" ? "nothing" : owed} (a handler that never returns, or a message the broker never delivered?)`,
      );
    }
    if (idle) await sleep(20);
  }
}

/**
 * Quiet means: the coordinator counts no delivery still to settle, the runtime no handler, reply or
 * settle in progress, and both stay so across a turn of the event loop (a settle callback may
 * publish the next message of a cascade).
 */
async function quiesceInProcess(
  running: RunningApp,
  coordinator: CountingCoordinator,
  timeoutMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => resolve("expired"), timeoutMs);
  });
  try {
    for (;;) {
      const done = await Promise.race([
        Promise.all([coordinator.whenIdle(), running.whenIdle()]).then(() => "idle" as const),
        // A fail-fast stop leaves its delivery unsettled on purpose: a stopped app is quiet too.
        running.stopped.then(() => "stopped" as const),
        expired,
      ]);
      if (done === "stopped") return;
      if (done === "expired") {
        throw new RustStreamError(
          "timeout",
          `the reaction was not over after ${timeoutMs} ms (${coordinator.outstanding} deliveries unsettled): a handler that never returns, or one that waits on real time?`,
        );
      }
      await new Promise((resolve) => setImmediate(resolve));
      if (coordinator.outstanding === 0 && running.inFlight === 0) return;
    }
  } finally {
    clearTimeout(timer);
  }
}
