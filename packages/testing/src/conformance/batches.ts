import {
  type BatchSubscription,
  type Delivery,
  type Subscription,
  supportsBatches,
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
import { ackAll, elsewhere } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

function batching(subscription: Subscription): BatchSubscription {
  if (!supportsBatches(subscription)) {
    throw new Error("the subscription does not offer batches (supportsBatches is false)");
  }
  return subscription;
}

/** Pulls batches of at most `max` until `count` deliveries arrived; checks each batch's size. */
async function pull(
  h: Harness,
  subscription: BatchSubscription,
  count: number,
  max: number,
): Promise<Delivery[][]> {
  const batches: Delivery[][] = [];
  let total = 0;
  while (total < count) {
    const batch = await within(h.arrivalMs, `batch after ${total}`, subscription.nextBatch(max));
    expect(batch.length, "a batch is never empty while open").toBeGreaterThan(0);
    expect(batch.length, `a batch holds at most ${max}`).toBeLessThanOrEqual(max);
    batches.push([...batch]);
    total += batch.length;
  }
  return batches;
}

export const batchScenarios: readonly Scenario<Harness>[] = [
  {
    name: "10 messages in batches of at most 3 keep publish order",
    needs: ["batches"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("batches");
        const subscription = batching(await connected.subscribe(h.source(name)));
        const publisher = await h.publisher(connected);
        for (let i = 0; i < 10; i++) await publisher.publish({ name, payload: bytes(`m${i}`) });
        const all = (await pull(h, subscription, 10, 3)).flat();
        expect(all.map((d) => text(d.payload))).toEqual([...Array(10).keys()].map((i) => `m${i}`));
        await ackAll(all);
        await subscription.close();
      }),
  },
  {
    name: "each element of a batch settles on its own",
    needs: ["batches", "requeue"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("elements");
        const subscription = batching(await connected.subscribe(h.source(name)));
        const publisher = await h.publisher(connected);
        // Messages already waiting must share a batch at least once in five rounds.
        let shared: Delivery[] | undefined;
        for (let round = 0; round < 5 && shared === undefined; round++) {
          for (let i = 0; i < 3; i++) {
            await publisher.publish({ name, payload: bytes(`r${round}-${i}`) });
          }
          const batches = await pull(h, subscription, 3, 3);
          shared = batches.find((b) => b.length > 1);
          if (shared === undefined) await ackAll(batches.flat());
          else await ackAll(batches.flat().filter((d) => !shared!.includes(d)));
        }
        if (shared === undefined) throw new Error("waiting messages never shared a batch");
        const [first, ...rest] = shared;
        expect(await first!.nack({ requeue: true })).toBe("ok");
        await ackAll(rest);
        const [again] = await pull(h, subscription, 1, 3);
        expect(again!.map((d) => text(d.payload))).toEqual([text(first!.payload)]);
        await ackAll(again!);
        await subscription.close();
      }),
  },
  {
    name: "a batch settled from another task requeues in order",
    needs: ["batches", "requeue"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("batch-elsewhere");
        const subscription = batching(await connected.subscribe(h.source(name)));
        const publisher = await h.publisher(connected);
        for (let i = 0; i < 3; i++) await publisher.publish({ name, payload: bytes(`e${i}`) });
        const first = (await pull(h, subscription, 3, 3)).flat();
        const answers = await elsewhere(() =>
          Promise.all(first.map((d) => d.nack({ requeue: true }))),
        );
        expect(answers).toEqual(["ok", "ok", "ok"]);
        const again = (await pull(h, subscription, 3, 3)).flat();
        expect(again.map((d) => text(d.payload))).toEqual(["e0", "e1", "e2"]);
        await ackAll(again);
        await subscription.close();
      }),
  },
];

/** Registers the batch suite: sizes, order, per-element settlement and other-task settlement. */
export function batches<TConnected extends AnyConnected>(
  factories: BrokerFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  registerSuite("batches", batchScenarios, h, h.capabilities, h.arrivalMs * 8);
}
