// The live round trip every broker runs on each runtime the project supports (Node's lines, Bun,
// Deno): a service as a user writes it, on the real server, through the broker's own client. It
// checks first that it runs on the runtime the test command meant (RUSTSTREAM_RUNTIME, set by the
// Bun and Deno lines of `npm test`), so a line cannot pass by quietly running on Node.
import { deepStrictEqual, equal } from "node:assert/strict";
import { type Broker, RustStream, type SourceOf } from "@ruststream/core";
import { type RuntimeName, runtimeName } from "@ruststream/core/broker";
import { uniqueName, within } from "@ruststream/testing";

export interface RoundTrip<TBroker extends Broker> {
  /** A broker of the package under test, configured for the live server. */
  readonly broker: TBroker;
  /** Where the subscriber on `name` reads (default: the bare name). */
  readonly source?: (name: string) => string | SourceOf<TBroker>;
  /** Whether the broker answers requests: then a request gets its reply too. */
  readonly request: boolean;
  /** How long each step may take (default 30 s: a first connect to Kafka's group coordinator). */
  readonly stepMs?: number;
}

/** The runtime the test command meant this process to run on (Node unless a line said otherwise). */
export function expectedRuntime(): RuntimeName {
  const wanted = process.env.RUSTSTREAM_RUNTIME ?? "node";
  if (wanted !== "node" && wanted !== "bun" && wanted !== "deno") {
    throw new Error(`RUSTSTREAM_RUNTIME is "${wanted}": it names node, bun or deno`);
  }
  return wanted;
}

/**
 * Starts an app with one subscriber, publishes three messages and waits until all three are
 * handled, asks a request where the broker has them, then stops the app and checks that it stopped
 * cleanly (not failed, nothing unflushed, nothing aborted).
 */
export async function roundTrip<TBroker extends Broker>(
  options: RoundTrip<TBroker>,
): Promise<void> {
  const expected = expectedRuntime();
  equal(
    runtimeName(),
    expected,
    `the round trip runs on ${runtimeName()}, not ${expected} as its line says`,
  );
  const stepMs = options.stepMs ?? 30_000;
  const source = options.source ?? ((name: string) => name);
  const orders = uniqueName("roundtrip-orders");
  const questions = uniqueName("roundtrip-questions");
  const handled: number[] = [];
  let allHandled: () => void = () => {};
  const three = new Promise<void>((resolve) => {
    allHandled = resolve;
  });
  const app = new RustStream({ name: uniqueName("roundtrip"), version: "1.0.0" });
  app.broker(options.broker, (b) => {
    b.subscriber<{ n: number }>(source(orders)).handle((order) => {
      handled.push(order.n);
      if (handled.length === 3) allHandled();
    });
    if (options.request) {
      b.subscriber<{ n: number }>(source(questions))
        .reply<{ doubled: number }>()
        .handle((question) => ({ doubled: question.n * 2 }));
    }
  });
  const running = await within(stepMs, "starting the app", app.start());
  let stopped = false;
  try {
    for (const n of [1, 2, 3])
      await within(stepMs, `publishing ${n}`, running.publish(orders, { n }));
    await within(stepMs, "handling the three messages", three);
    deepStrictEqual(
      [...handled].sort((a, b) => a - b),
      [1, 2, 3],
    );
    if (options.request) {
      const reply = await within(
        stepMs,
        "the request's reply",
        running.request(questions, { n: 21 }, { timeoutMs: stepMs }),
      );
      deepStrictEqual(reply, { doubled: 42 });
    }
    const report = await within(stepMs, "stopping the app", running.stop());
    stopped = true;
    deepStrictEqual(
      { failed: report.failed, aborted: report.aborted, unflushed: report.unflushed },
      { failed: false, aborted: false, unflushed: 0 },
    );
    equal(running.state, "stopped");
  } finally {
    if (!stopped) await running.stop();
  }
}
