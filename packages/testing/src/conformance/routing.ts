import {
  type Delivery,
  HeaderMap,
  type SettleAnswer,
  supportsBatches,
  supportsRequest,
  supportsSeek,
  supportsTransactions,
} from "@ruststream/core";
import { expect } from "vitest";
import { bytes, text } from "../helpers/payloadText.js";
import { uniqueName } from "../helpers/uniqueName.js";
import { type Capability, has } from "./capabilities.js";
import {
  type AnyConnected,
  type BrokerFactories,
  type Harness,
  harnessOf,
  withConnection,
} from "./harness.js";
import { ackAll, Collector, throughSentinel } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

async function open(h: Harness, connected: AnyConnected, prefix: string) {
  const name = uniqueName(prefix);
  const source = h.source(name);
  const collector = new Collector(await connected.subscribe(source));
  const publisher = await h.publisher(connected);
  return { name, collector, publisher };
}

const answerOf = (declared: boolean): SettleAnswer => (declared ? "ok" : "unsupported");

export const routingScenarios: readonly Scenario<Harness>[] = [
  {
    name: "settle answers and capability marks are the ones declared",
    run: (h) =>
      withConnection(h, async (connected) => {
        // A capability not built yet answers as one the broker cannot: absent, both of them.
        const declared = (capability: Capability) => has(h.capabilities, capability);
        const { name, collector, publisher } = await open(h, connected, "declared");
        const subscription = await connected.subscribe(h.source(uniqueName("marks")));
        expect(
          {
            batches: supportsBatches(subscription),
            seek: supportsSeek(subscription),
            transactions: supportsTransactions(publisher),
            request: supportsRequest(publisher),
          },
          "the marks the subscription and publisher carry",
        ).toEqual({
          batches: declared("batches"),
          seek: declared("seek"),
          transactions: declared("transactions"),
          request: declared("request"),
        });
        await subscription.close();
        const verbs = [
          ["ack", declared("ack"), (d) => d.ack()],
          ["drop", declared("drop"), (d) => d.nack({ requeue: false })],
          ["requeue", declared("requeue"), (d) => d.nack({ requeue: true })],
          ["delayedRequeue", declared("delayedRequeue"), (d) => d.nackAfter(50)],
        ] as const satisfies ReadonlyArray<readonly [string, boolean, (d: Delivery) => unknown]>;
        for (const [verb] of verbs) await publisher.publish({ name, payload: bytes(verb) });
        const got = await collector.waitFor(verbs.length, h.arrivalMs, "one message per verb");
        const answers: Record<string, unknown> = {};
        const expected: Record<string, unknown> = {};
        for (const [i, [verb, yes, settle]] of verbs.entries()) {
          const d = got[i]!;
          expect(text(d.payload)).toBe(verb);
          answers[verb] = await settle(d);
          expected[verb] = answerOf(yes);
          // `unsupported` changed nothing: the delivery is still open for another verb.
          expect(d.settled, `${verb}: settled after "${String(answers[verb])}"`).toBe(yes);
        }
        expect(answers, "each verb answers as declared").toEqual(expected);
        // And `ok` from a requeue, delayed or not, is kept: the message comes back.
        const back = [
          declared("requeue") && "requeue",
          declared("delayedRequeue") && "delayedRequeue",
        ];
        const expectedBack = back.filter((verb) => verb !== false).sort();
        const all = await collector.waitFor(
          verbs.length + expectedBack.length,
          h.arrivalMs,
          "the requeued messages",
        );
        expect(
          all
            .slice(verbs.length)
            .map((d) => text(d.payload))
            .sort(),
        ).toEqual(expectedBack);
        await ackAll(all);
        await collector.stop();
      }),
  },
  {
    name: "delivers in publish order",
    run: (h) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected, "order");
        for (let i = 0; i < 10; i++) await publisher.publish({ name, payload: bytes(`m${i}`) });
        const got = await collector.waitFor(10, h.arrivalMs, "ten messages");
        expect(got.map((d) => text(d.payload))).toEqual([...Array(10).keys()].map((i) => `m${i}`));
        await ackAll(got);
        await collector.stop();
      }),
  },
  {
    name: "a message published before subscribing follows the declared backlog",
    run: (h) =>
      withConnection(h, async (connected) => {
        const { backlog } = h.capabilities;
        const name = uniqueName("backlog");
        const publisher = await h.publisher(connected);
        await publisher.publish({ name, payload: bytes("early") });
        const collector = new Collector(await connected.subscribe(h.source(name)));
        await publisher.publish({ name, payload: bytes("late") });
        const expected = backlog === "delivered" ? ["early", "late"] : ["late"];
        const got = await collector.waitFor(expected.length, h.arrivalMs, "backlog");
        await collector.quiet(expected.length, h.silenceMs, `backlog "${backlog}"`);
        expect(got.map((d) => text(d.payload))).toEqual(expected);
        await ackAll(got);
        await collector.stop();
      }),
  },
  {
    name: "an acked delivery does not come back",
    needs: ["ack"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected, "ack");
        await publisher.publish({ name, payload: bytes("once") });
        const [d] = await collector.waitFor(1, h.arrivalMs, "first delivery");
        expect(await d!.ack()).toBe("ok");
        const seen = await throughSentinel(publisher, collector, name, h.arrivalMs, "after ack");
        await collector.quiet(2, h.silenceMs, "after ack");
        expect(seen).toEqual(["once", "sentinel"]);
        await ackAll(collector.items);
        await collector.stop();
      }),
  },
  {
    name: "a requeued delivery comes back",
    needs: ["requeue"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected, "requeue");
        await publisher.publish({ name, payload: bytes("again") });
        const [d] = await collector.waitFor(1, h.arrivalMs, "first delivery");
        expect(await d!.nack({ requeue: true })).toBe("ok");
        const got = await collector.waitFor(2, h.arrivalMs, "requeued delivery");
        expect(text(got[1]!.payload)).toBe("again");
        await ackAll(got);
        await collector.stop();
      }),
  },
  {
    name: "a dropped delivery stays gone",
    needs: ["drop"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected, "drop");
        await publisher.publish({ name, payload: bytes("gone") });
        const [d] = await collector.waitFor(1, h.arrivalMs, "first delivery");
        expect(await d!.nack({ requeue: false })).toBe("ok");
        const seen = await throughSentinel(publisher, collector, name, h.arrivalMs, "after drop");
        await collector.quiet(2, h.silenceMs, "after drop");
        expect(seen).toEqual(["gone", "sentinel"]);
        await ackAll(collector.items);
        await collector.stop();
      }),
  },
  {
    name: "headers arrive",
    run: (h) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected, "headers");
        const headers = new HeaderMap({ "content-type": "application/json", "X-Tenant": "acme" });
        await publisher.publish({ name, payload: bytes("{}"), headers });
        const [d] = await collector.waitFor(1, h.arrivalMs, "delivery with headers");
        expect(d!.headers.getString("content-type")).toBe("application/json");
        expect(d!.headers.getString("x-tenant")).toBe("acme");
        await ackAll([d!]);
        await collector.stop();
      }),
  },
];

/**
 * Registers the routing suite: the declared settle answers and capability marks, order, backlog,
 * ack, requeue, drop and headers.
 */
export function routing<TConnected extends AnyConnected>(
  factories: BrokerFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  registerSuite("routing", routingScenarios, h, h.capabilities, h.arrivalMs * 3 + h.silenceMs * 2);
}
