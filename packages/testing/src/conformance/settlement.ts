import type { Delivery, Publisher } from "@ruststream/core";
import { expect } from "vitest";
import { bytes, text } from "../helpers/payloadText.js";
import { uniqueName } from "../helpers/uniqueName.js";
import { has } from "./capabilities.js";
import { type AnyConnected, type BrokerFactories, type Harness, harnessOf } from "./harness.js";
import { ackAll, Collector, throughSentinel } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

/**
 * Reads `name` on a fresh client until the sentinel arrives, then acks everything it read. A
 * message that never shows up before the sentinel was lost (or, for the settled ones, stayed gone).
 */
async function readThroughSentinel(h: Harness, name: string): Promise<string[]> {
  const connected = await h.connect();
  try {
    const collector = new Collector(await connected.subscribe(h.source(name)));
    const publisher = await h.publisher(connected);
    const seen = await throughSentinel(publisher, collector, name, h.arrivalMs, "a new client");
    await ackAll(collector.items);
    await collector.stop();
    return seen.filter((p) => p !== "sentinel");
  } finally {
    await connected.shutdown();
  }
}

/** Publishes `payloads` on a first client, hands the deliveries to `settle`, then shuts down. */
async function firstClient(
  h: Harness,
  name: string,
  payloads: readonly string[],
  settle: (
    deliveries: Delivery[],
    collector: Collector,
    publisher: Publisher<never>,
  ) => Promise<void>,
): Promise<void> {
  const connected = await h.connect();
  try {
    const collector = new Collector(await connected.subscribe(h.source(name)));
    const publisher = await h.publisher(connected);
    for (const p of payloads) await publisher.publish({ name, payload: bytes(p) });
    const got = await collector.waitFor(payloads.length, h.arrivalMs, "first client's deliveries");
    await settle(got, collector, publisher);
  } finally {
    await connected.shutdown();
  }
}

export const settlementScenarios: readonly Scenario<Harness>[] = [
  {
    name: "an acked delivery never comes back, not even to a new client",
    needs: ["durable", "ack"],
    run: async (h) => {
      const name = uniqueName("acked");
      await firstClient(h, name, ["done"], async ([d], c, publisher) => {
        expect(await d!.ack()).toBe("ok");
        // Read on this client up to a sentinel published behind it: it did not come back first.
        const seen = await throughSentinel(publisher, c, name, h.arrivalMs, "after ack");
        expect(seen).toEqual(["done", "sentinel"]);
        await ackAll(c.items);
      });
      expect(await readThroughSentinel(h, name)).toEqual([]);
    },
  },
  {
    name: "a dropped delivery never comes back, not even to a new client",
    needs: ["durable", "drop"],
    run: async (h) => {
      const name = uniqueName("dropped");
      await firstClient(h, name, ["dropped"], async ([d], c, publisher) => {
        expect(await d!.nack({ requeue: false })).toBe("ok");
        // Read on this client up to a sentinel published behind it: it did not come back first.
        const seen = await throughSentinel(publisher, c, name, h.arrivalMs, "after drop");
        expect(seen).toEqual(["dropped", "sentinel"]);
        await ackAll(c.items);
      });
      expect(await readThroughSentinel(h, name)).toEqual([]);
    },
  },
  {
    name: "ok from a requeue means the same delivery comes back",
    needs: ["durable", "requeue"],
    run: async (h) => {
      const name = uniqueName("requeued");
      await firstClient(h, name, ["back"], async ([d], c) => {
        expect(await d!.nack({ requeue: true })).toBe("ok");
        const got = await c.waitFor(2, h.arrivalMs, "requeued delivery");
        expect(text(got[1]!.payload)).toBe("back");
        await ackAll(got);
      });
      // Acked once it came back: a new client sees nothing more of it.
      expect(await readThroughSentinel(h, name)).toEqual([]);
    },
  },
  {
    name: "out-of-order settlement loses nothing: unsettled ones come back, in order",
    needs: ["durable", "ack"],
    run: async (h) => {
      const name = uniqueName("gap");
      await firstClient(h, name, ["one", "two", "three"], async (got) => {
        // Ack the last of three in flight; the first two are abandoned by the shutdown.
        expect(await got[2]!.ack()).toBe("ok");
      });
      const seen = await readThroughSentinel(h, name);
      // A log that commits a contiguous prefix may redeliver "three": tolerated. Losing one is not.
      const withoutDuplicate = seen.filter((p) => p !== "three");
      expect(withoutDuplicate).toEqual(["one", "two"]);
    },
  },
  {
    // Both ways, so a declaration of either kind is checked: the sentinel behind the new client's
    // read, not a quiet spell, proves that nothing came back where nothing may.
    name: "a delivery abandoned unsettled comes back to a new client exactly when durable is declared",
    run: async (h) => {
      const name = uniqueName("abandoned");
      await firstClient(h, name, ["orphan"], async () => {});
      const expected = has(h.capabilities, "durable") ? ["orphan"] : [];
      expect(await readThroughSentinel(h, name), "what a new client of the subject reads").toEqual(
        expected,
      );
    },
  },
];

/**
 * Registers the settlement suite: several checks read on a second client what the first left
 * behind, which a durable source (a consumer group, a stored position) hands back and any other
 * source never does.
 */
export function settlement<TConnected extends AnyConnected>(
  factories: BrokerFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  registerSuite("settlement", settlementScenarios, h, h.capabilities, h.arrivalMs * 5);
}
