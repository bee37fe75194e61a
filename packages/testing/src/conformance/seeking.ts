import {
  type Delivery,
  isRustStreamError,
  type Position,
  type SeekableSubscription,
  type Subscription,
  supportsSeek,
} from "@ruststream/core";
import { expect } from "vitest";
import { bytes, text } from "../helpers/payloadText.js";
import { uniqueName } from "../helpers/uniqueName.js";
import { within } from "../helpers/within.js";
import {
  type AnyConnected,
  type BrokerFactories,
  type Harness,
  harnessOf,
  withConnection,
} from "./harness.js";
import { elsewhere, nextDelivery } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

export interface SeekingFactories<TConnected extends AnyConnected>
  extends BrokerFactories<TConnected> {
  /**
   * A position of the subscription's source that was evicted or never existed; needed when the
   * broker declares `seek`.
   */
  readonly unknownPosition?: (subscription: SeekableSubscription) => Position;
}

interface SeekContext {
  readonly h: Harness;
  readonly unknownPosition: ((subscription: SeekableSubscription) => Position) | undefined;
}

function seekable(subscription: Subscription): SeekableSubscription {
  if (!supportsSeek(subscription)) {
    throw new Error("the subscription cannot seek (supportsSeek is false)");
  }
  return subscription;
}

/** Subscribes, publishes `count` messages and reads them all, acking each. */
async function published(h: Harness, connected: AnyConnected, count: number) {
  const name = uniqueName("seek");
  const subscription = seekable(await connected.subscribe(h.source(name)));
  const publisher = await h.publisher(connected);
  for (let i = 0; i < count; i++) await publisher.publish({ name, payload: bytes(`p${i}`) });
  const positions: string[] = [];
  for (let i = 0; i < count; i++) {
    const d = await nextDelivery(subscription, h.arrivalMs, `message ${i}`);
    positions.push(d.position.toString());
    await d.ack();
  }
  return { name, subscription, publisher, positions };
}

async function expectNext(
  h: Harness,
  subscription: Subscription,
  payloads: string[],
  step: string,
) {
  for (const payload of payloads) {
    const d: Delivery = await nextDelivery(subscription, h.arrivalMs, `${step}: ${payload}`);
    expect(text(d.payload), step).toBe(payload);
    await d.ack();
  }
}

export const seekingScenarios: readonly Scenario<SeekContext>[] = [
  {
    name: "a seek back replays exactly from the position, a stored position included",
    needs: ["seek"],
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const { subscription, positions } = await published(h, connected, 5);
        await subscription.seek(subscription.parsePosition(positions[2]!));
        await expectNext(h, subscription, ["p2", "p3", "p4"], "after seeking back");
        await subscription.close();
      }),
  },
  {
    name: "a seek forward skips, and new publishes keep arriving",
    needs: ["seek"],
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const { name, subscription, publisher, positions } = await published(h, connected, 5);
        await subscription.seek(subscription.parsePosition(positions[0]!));
        await expectNext(h, subscription, ["p0"], "after seeking to the start");
        await subscription.seek(subscription.parsePosition(positions[3]!));
        await expectNext(h, subscription, ["p3", "p4"], "after seeking forward");
        await publisher.publish({ name, payload: bytes("fresh") });
        await expectNext(h, subscription, ["fresh"], "a publish after seeking");
        await subscription.close();
      }),
  },
  {
    name: "a new subscription that seeks before its first delivery starts there",
    needs: ["seek"],
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const { name, subscription, positions } = await published(h, connected, 4);
        await subscription.close();
        const fresh = seekable(await connected.subscribe(h.source(name)));
        await fresh.seek(fresh.parsePosition(positions[1]!));
        await expectNext(h, fresh, ["p1", "p2", "p3"], "fresh subscription");
        await fresh.close();
      }),
  },
  {
    name: "a seek from another task works",
    needs: ["seek"],
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const { subscription, positions } = await published(h, connected, 3);
        await elsewhere(() => subscription.seek(subscription.parsePosition(positions[1]!)));
        await expectNext(h, subscription, ["p1", "p2"], "after a seek from another task");
        await subscription.close();
      }),
  },
  {
    name: "a seek to an unknown position fails and does not move the subscription",
    needs: ["seek"],
    run: ({ h, unknownPosition }) =>
      withConnection(h, async (connected) => {
        const { name, subscription, publisher } = await published(h, connected, 2);
        if (unknownPosition === undefined) {
          throw new Error("the broker declares seek: give the seeking suite unknownPosition");
        }
        let error: unknown;
        try {
          await subscription.seek(unknownPosition(subscription));
        } catch (e) {
          error = e;
        }
        expect(
          isRustStreamError(error, "unknown-position"),
          `seeking to an unknown position must fail with unknown-position, got ${String(error)}`,
        ).toBe(true);
        await publisher.publish({ name, payload: bytes("next") });
        await expectNext(h, subscription, ["next"], "after the failed seek");
        await subscription.close();
      }),
  },
  {
    name: "a seek after shutdown fails promptly",
    needs: ["seek"],
    run: async ({ h }) => {
      const connected = await h.connect();
      const { subscription, positions } = await published(h, connected, 1);
      await connected.shutdown();
      let error: unknown;
      try {
        await within(
          5000,
          "seek after shutdown",
          subscription.seek(subscription.parsePosition(positions[0]!)),
        );
      } catch (e) {
        error = e;
      }
      expect(isRustStreamError(error, "closed"), String(error)).toBe(true);
    },
  },
];

/** Registers the seeking suite: back, forward, fresh, other-task, unknown and after shutdown. */
export function seeking<TConnected extends AnyConnected>(
  factories: SeekingFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  registerSuite(
    "seeking",
    seekingScenarios,
    { h, unknownPosition: factories.unknownPosition },
    h.capabilities,
    h.arrivalMs * 8,
  );
}
