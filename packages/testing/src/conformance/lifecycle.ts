import { isRustStreamError } from "@ruststream/core";
import { expect } from "vitest";
import { bytes, text } from "../helpers/payloadText.js";
import { uniqueName } from "../helpers/uniqueName.js";
import { within } from "../helpers/within.js";
import { has } from "./capabilities.js";
import { gracefulStopScenario } from "./gracefulStop.js";
import {
  type AnyConnected,
  type BrokerFactories,
  type Harness,
  harnessOf,
  withConnection,
} from "./harness.js";
import { ackAll, Collector, elsewhere, nextDelivery, throughSentinel } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

export interface LifecycleFactories<TConnected extends AnyConnected>
  extends BrokerFactories<TConnected> {
  /** The delay `nackAfter` is checked with, where the broker supports it (default 300 ms). */
  readonly nackAfterMs?: number;
}

interface LifecycleContext {
  readonly h: Harness;
  readonly nackAfterMs: number;
}

async function expectClosed(step: string, work: () => Promise<unknown>): Promise<void> {
  let outcome: unknown = "resolved";
  try {
    await work();
  } catch (error) {
    outcome = error;
  }
  if (!isRustStreamError(outcome, "closed")) {
    throw new Error(
      `${step}: expected a RustStreamError with code "closed", got ${String(outcome)}`,
    );
  }
}

export const lifecycleScenarios: readonly Scenario<LifecycleContext>[] = [
  {
    name: "the constructor is synchronous and starts no I/O",
    run: async ({ h }) => {
      const before = process.getActiveResourcesInfo().length;
      const started = performance.now();
      const broker = h.makeBroker();
      const took = performance.now() - started;
      expect(typeof (broker as unknown as { then?: unknown }).then).not.toBe("function");
      expect(took).toBeLessThan(1000);
      // A socket, a timer or a file handle opened by the constructor would show here.
      expect(process.getActiveResourcesInfo().length).toBeLessThanOrEqual(before);
    },
  },
  {
    name: "subscribe and publish from other tasks",
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("elsewhere");
        const subscription = await elsewhere(() => connected.subscribe(h.source(name)));
        const collector = new Collector(subscription);
        // A publisher first used in another task keeps publishing from this one.
        const publisher = await h.publisher(connected);
        await elsewhere(() => publisher.publish({ name, payload: bytes("a") }));
        await publisher.publish({ name, payload: bytes("b") });
        const got = await collector.waitFor(2, h.arrivalMs, "two messages");
        expect(got.map((d) => text(d.payload))).toEqual(["a", "b"]);
        await ackAll(got);
        await collector.stop();
      }),
  },
  {
    name: "a second pull while one waits is refused, and the waiting one still gets the message",
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("second-pull");
        const subscription = await connected.subscribe(h.source(name));
        const waiting = subscription.next();
        // Should the scenario fail before it is awaited, the shutdown's rejection is expected.
        waiting.catch(() => undefined);
        let refused: unknown = "resolved";
        try {
          // Bounded: a pull that queues behind the waiting one would wait for ever here.
          await within(h.arrivalMs, "the second pull", subscription.next());
        } catch (error) {
          refused = error;
        }
        expect(
          isRustStreamError(refused, "invalid-argument"),
          `a second next() while one waits: expected code "invalid-argument", got ${String(refused)}`,
        ).toBe(true);
        const publisher = await h.publisher(connected);
        await publisher.publish({ name, payload: bytes("only") });
        const first = await within(h.arrivalMs, "the waiting pull", waiting);
        expect(first.done).toBe(false);
        expect(text(first.value!.payload)).toBe("only");
        await ackAll([first.value!]);
        await subscription.close();
      }),
  },
  {
    name: "settle from other tasks: a requeue comes back, a drop stays gone",
    needs: ["requeue", "drop"],
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("settle-elsewhere");
        const collector = new Collector(await connected.subscribe(h.source(name)));
        const publisher = await h.publisher(connected);
        await publisher.publish({ name, payload: bytes("a") });
        await publisher.publish({ name, payload: bytes("b") });
        const [a, b] = await collector.waitFor(2, h.arrivalMs, "two messages");
        expect(await elsewhere(() => a!.nack({ requeue: true }))).toBe("ok");
        expect(await elsewhere(() => b!.nack({ requeue: false }))).toBe("ok");
        const again = await collector.waitFor(3, h.arrivalMs, "requeued from another task");
        expect(text(again[2]!.payload)).toBe("a");
        await ackAll(again);
        const seen = await throughSentinel(publisher, collector, name, h.arrivalMs, "dropped");
        await collector.quiet(4, h.silenceMs, "dropped from another task");
        expect(seen).toEqual(["a", "b", "a", "sentinel"]);
        await ackAll(collector.items);
        await collector.stop();
      }),
  },
  {
    name: "nackAfter redelivers no sooner than its delay",
    needs: ["delayedRequeue"],
    run: ({ h, nackAfterMs }) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("delay");
        const collector = new Collector(await connected.subscribe(h.source(name)));
        const publisher = await h.publisher(connected);
        await publisher.publish({ name, payload: bytes("later") });
        const [d] = await collector.waitFor(1, h.arrivalMs, "first delivery");
        const settledAt = performance.now();
        expect(await d!.nackAfter(nackAfterMs)).toBe("ok");
        const got = await collector.waitFor(2, nackAfterMs + 10_000, "delayed redelivery");
        // Timers may fire a millisecond early on some platforms; more than that is a real miss.
        expect(performance.now() - settledAt).toBeGreaterThanOrEqual(nackAfterMs - 2);
        expect(text(got[1]!.payload)).toBe("later");
        await ackAll(got);
        await collector.stop();
      }),
  },
  {
    name: "shutdown is prompt, and a second one is harmless",
    run: async ({ h }) => {
      const connected = await h.connect();
      const name = uniqueName("shutdown");
      const publisher = await h.publisher(connected);
      await connected.subscribe(h.source(name));
      await publisher.publish({ name, payload: bytes("x") });
      const closed = await within(10_000, "shutdown", connected.shutdown());
      expect(closed.state).toBe("closed");
      expect(typeof closed.unflushed).toBe("number");
      expect(closed.closedSubscriptions, "subscriptions open at shutdown").toBe(1);
      expect(connected.state).toBe("closed");
      const again = await within(10_000, "second shutdown", connected.shutdown());
      expect(again.state).toBe("closed");
    },
  },
  {
    name: "after shutdown every publisher and subscription rejects with a clear error",
    run: async ({ h }) => {
      const connected = await h.connect();
      const name = uniqueName("after");
      const used = await h.publisher(connected);
      const kept = await h.publisher(connected);
      const subscription = await connected.subscribe(h.source(name));
      await used.publish({ name, payload: bytes("held") });
      const held = await nextDelivery(subscription, h.arrivalMs, "held delivery");
      // Settled into a value at once, so its rejection is never reported as unhandled meanwhile.
      const waiting = subscription.next().then(
        () => "resolved",
        (error: unknown) => error,
      );
      const closed = await connected.shutdown();
      expect(closed.closedSubscriptions, "subscriptions open at shutdown").toBe(1);
      // The held delivery is the only one out: a broker that requeues hands it back. One that
      // cannot may count it (handed back to a server that already let it go) or not (nothing held).
      if (has(h.capabilities, "requeue")) {
        expect(closed.returnedDeliveries, "deliveries handed back at shutdown").toBe(1);
      } else {
        expect([0, 1], "deliveries handed back at shutdown").toContain(closed.returnedDeliveries);
      }
      const message = { name, payload: bytes("after") };
      await expectClosed("publisher used before shutdown", () => used.publish(message));
      await expectClosed("publisher kept unused", () => kept.publish(message));
      await expectClosed("publisher made from the kept handle", async () =>
        (await h.publisher(connected)).publish(message),
      );
      await expectClosed("subscribe after shutdown", () => connected.subscribe(h.source(name)));
      await expectClosed("a pull waiting at shutdown", async () => {
        throw await waiting;
      });
      await expectClosed("a pull after shutdown", () => subscription.next());
      // A delivery held across shutdown either refuses to settle, or, where a new client picks up
      // what the last left, answers `ok` and comes back to one; where nothing requeues, it may
      // answer `unsupported` as it always does.
      let answer: unknown;
      try {
        answer = await held.nack({ requeue: true });
      } catch (error) {
        if (!isRustStreamError(error, "closed")) throw error;
        answer = "closed";
      }
      const durable = has(h.capabilities, "durable");
      const allowed = has(h.capabilities, "requeue")
        ? [durable && "ok", "closed"]
        : ["unsupported", "closed"];
      expect(allowed, "a requeue of a delivery held across shutdown").toContain(answer);
      if (answer === "ok") {
        const next = await h.connect();
        try {
          const collector = new Collector(await next.subscribe(h.source(name)));
          const [back] = await collector.waitFor(1, h.arrivalMs, "held delivery on a new client");
          expect(text(back!.payload)).toBe("held");
          await back!.ack();
          await collector.stop();
        } finally {
          await next.shutdown();
        }
      }
    },
  },
  gracefulStopScenario,
];

/**
 * Registers the lifecycle suite: construction, other-task use, delayed nack, shutdown, and an app's
 * graceful stop settling after the close.
 */
export function lifecycle<TConnected extends AnyConnected>(
  factories: LifecycleFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  const nackAfterMs = factories.nackAfterMs ?? 300;
  registerSuite(
    "lifecycle",
    lifecycleScenarios,
    { h, nackAfterMs },
    h.capabilities,
    h.arrivalMs * 3 + 25_000,
  );
}
