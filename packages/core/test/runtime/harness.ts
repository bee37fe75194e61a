// A small in-process harness for core's own runtime tests (the full one, TestApp, lives in
// @ruststream/testing, which depends on core): connect in-process, record events, wait for quiet.

import { CountingCoordinator, isTestableBroker, supportsInProcess } from "../../src/brokerEntry.js";
import {
  type ConnectedBroker,
  HeaderMap,
  ManualClock,
  MemoryBroker,
  type OutcomeEvent,
  type RawMessage,
  type RunningApp,
  type RuntimeEvent,
  type RustStream,
  type StartOptions,
} from "../../src/index.js";

export interface Harness {
  readonly running: RunningApp;
  readonly clock: ManualClock;
  readonly events: RuntimeEvent[];
  /** Publishes through the app's broker and waits for the whole reaction. */
  publish(name: string, value: unknown): Promise<void>;
  publishRaw(
    name: string,
    payload: string | Uint8Array,
    headers?: Record<string, string>,
  ): Promise<void>;
  quiet(): Promise<void>;
  advance(ms: number): Promise<void>;
  outcomes(subscriber: string): OutcomeEvent[];
  published(name: string): readonly RawMessage[];
}

export async function startInProcess(
  app: RustStream,
  options: StartOptions = {},
): Promise<Harness> {
  const clock = new ManualClock();
  const coordinator = new CountingCoordinator();
  const events: RuntimeEvent[] = [];
  const running = await app.start({
    clock,
    coordinator,
    observers: [(e) => events.push(e)],
    connect: (broker) => {
      if (!supportsInProcess(broker)) throw new Error("not in-process");
      return broker.connectInProcess({ coordinator, clock });
    },
    ...options,
  });
  const memory = () => {
    const connected: ConnectedBroker = running.connection();
    if (!isTestableBroker(connected)) throw new Error("not testable");
    return connected;
  };
  const quiet = async () => {
    for (let i = 0; i < 1000; i++) {
      // A fail-fast stop leaves deliveries unsettled: a stopped app is quiet too.
      if (running.state === "stopped") return;
      await Promise.race([coordinator.whenIdle(), running.stopped]);
      await running.whenIdle();
      await new Promise((r) => setImmediate(r));
      if (coordinator.outstanding === 0 && running.inFlight === 0) return;
    }
    throw new Error("never quiet");
  };
  const encoder = new TextEncoder();
  return {
    running,
    clock,
    events,
    quiet,
    async publish(name, value) {
      memory().inject({ name, payload: encoder.encode(JSON.stringify(value)) });
      await quiet();
    },
    async publishRaw(name, payload, headers) {
      memory().inject({
        name,
        payload: typeof payload === "string" ? encoder.encode(payload) : payload,
        headers: new HeaderMap(headers ?? {}),
      });
      await quiet();
    },
    async advance(ms) {
      clock.advance(ms);
      await quiet();
    },
    outcomes: (subscriber) =>
      events.filter((e): e is OutcomeEvent => e.type === "outcome" && e.subscriber === subscriber),
    published: (name) => memory().published(name),
  };
}

export function json(bytes: Uint8Array): unknown {
  return JSON.parse(new TextDecoder().decode(bytes));
}

export { MemoryBroker };
