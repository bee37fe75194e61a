import { type Broker, HeaderMap, isRustStreamError, ManualClock } from "@ruststream/core";
import {
  CountingCoordinator,
  isTestableBroker,
  supportsInProcess,
  type TestableBroker,
} from "@ruststream/core/broker";
import { expect } from "vitest";
import { bytes, text } from "../helpers/payloadText.js";
import { uniqueName } from "../helpers/uniqueName.js";
import { type AnyConnected, type BrokerFactories, type Harness, harnessOf } from "./harness.js";
import { nextDelivery } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

interface InProcessRun {
  readonly connected: AnyConnected & TestableBroker;
  readonly coordinator: CountingCoordinator;
  readonly clock: ManualClock;
}

async function inProcess(h: Harness, body: (run: InProcessRun) => Promise<void>): Promise<void> {
  const broker: Broker<AnyConnected> = h.makeBroker();
  if (!supportsInProcess(broker)) throw new Error("the broker has no in-process mode");
  const coordinator = new CountingCoordinator();
  const clock = new ManualClock();
  const connected = await broker.connectInProcess({ coordinator, clock });
  try {
    if (!isTestableBroker(connected)) {
      throw new Error("the in-process connection does not expose inject/published");
    }
    await body({ connected, coordinator, clock });
  } finally {
    await connected.shutdown();
  }
}

export const inProcessScenarios: readonly Scenario<Harness>[] = [
  {
    name: "a delivery is counted before inject returns and released once at ack",
    run: (h) =>
      inProcess(h, async ({ connected, coordinator }) => {
        const name = uniqueName("count");
        const subscription = await connected.subscribe(h.source(name));
        connected.inject({ name, payload: bytes("x") });
        expect(coordinator.outstanding).toBe(1);
        const d = await nextDelivery(subscription, h.arrivalMs, "injected");
        await d.ack();
        expect(coordinator.outstanding).toBe(0);
        await coordinator.whenIdle();
      }),
  },
  {
    name: "a requeue stays counted, a drop releases",
    needs: ["requeue", "drop"],
    run: (h) =>
      inProcess(h, async ({ connected, coordinator }) => {
        const name = uniqueName("requeue-count");
        const subscription = await connected.subscribe(h.source(name));
        connected.inject({ name, payload: bytes("x") });
        const first = await nextDelivery(subscription, h.arrivalMs, "first");
        expect(await first.nack({ requeue: true })).toBe("ok");
        expect(coordinator.outstanding).toBe(1);
        const again = await nextDelivery(subscription, h.arrivalMs, "requeued");
        expect(await again.nack({ requeue: false })).toBe("ok");
        expect(coordinator.outstanding).toBe(0);
      }),
  },
  {
    name: "nothing is counted for a name nobody subscribes to",
    run: (h) =>
      inProcess(h, async ({ connected, coordinator }) => {
        connected.inject({ name: uniqueName("nobody"), payload: bytes("x") });
        expect(coordinator.outstanding).toBe(0);
      }),
  },
  {
    name: "a delayed redelivery is released at the nack and counted again when due",
    needs: ["delayedRequeue"],
    run: (h) =>
      inProcess(h, async ({ connected, coordinator, clock }) => {
        const name = uniqueName("delayed");
        const subscription = await connected.subscribe(h.source(name));
        connected.inject({ name, payload: bytes("later") });
        const d = await nextDelivery(subscription, h.arrivalMs, "first");
        expect(await d.nackAfter(1000)).toBe("ok");
        expect(coordinator.outstanding).toBe(0);
        clock.advance(999);
        expect(coordinator.outstanding).toBe(0);
        clock.advance(1);
        expect(coordinator.outstanding).toBe(1);
        const again = await nextDelivery(subscription, h.arrivalMs, "due");
        expect(text(again.payload)).toBe("later");
        await again.ack();
        expect(coordinator.outstanding).toBe(0);
      }),
  },
  {
    name: "published() lists every publish and injection, in order, with headers",
    run: (h) =>
      inProcess(h, async ({ connected }) => {
        const name = uniqueName("log");
        // Subscribed first, as in an app under test: a broker routes an injection by its source.
        const subscription = await connected.subscribe(h.source(name));
        const publisher = await h.publisher(connected);
        const sent = [
          { name, payload: bytes("one"), headers: new HeaderMap({ "x-step": "published" }) },
          { name, payload: bytes("two"), headers: new HeaderMap({ "x-step": "injected" }) },
          { name, payload: bytes("three"), headers: new HeaderMap({ "x-step": "again" }) },
        ];
        await publisher.publish(sent[0]!);
        connected.inject(sent[1]!);
        await publisher.publish(sent[2]!);
        const log = connected.published(name);
        expect(log.map((m) => text(m.payload))).toEqual(["one", "two", "three"]);
        // Exactly the headers given: a log that drops them, or adds the broker's own, misleads a test
        // asserting on what the app published.
        log.forEach((m, i) => {
          expect([...m.headers], `headers of "${text(m.payload)}"`).toEqual([...sent[i]!.headers]);
        });
        await subscription.close();
      }),
  },
  {
    name: "inject() after shutdown rejects closed and delivers nothing",
    run: (h) =>
      inProcess(h, async ({ connected, coordinator }) => {
        const name = uniqueName("closed-inject");
        await connected.shutdown();
        let code: string | undefined;
        try {
          connected.inject({ name, payload: bytes("late") });
        } catch (error) {
          code = isRustStreamError(error) ? error.code : String(error);
        }
        expect(code).toBe("closed");
        expect(coordinator.outstanding).toBe(0);
      }),
  },
];

/** Registers the checks of a broker's in-process mode, which `TestApp` relies on. */
export function inProcessTransport<TConnected extends AnyConnected>(
  factories: BrokerFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  registerSuite("in-process transport", inProcessScenarios, h, h.capabilities, h.arrivalMs * 3);
}
