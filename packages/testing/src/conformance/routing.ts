import { type Backlog, HeaderMap } from "@ruststream/core";
import { expect } from "vitest";
import {
  type AnyConnected,
  type BrokerFactories,
  type Harness,
  harnessOf,
  withConnection,
} from "./harness.js";
import { ackAll, bytes, Collector, text, uniqueName } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

export interface RoutingFactories<TConnected extends AnyConnected>
  extends BrokerFactories<TConnected> {
  /** Whether a new subscription receives what was published before it opened. */
  readonly backlog: Backlog;
}

interface RoutingContext {
  readonly h: Harness;
  readonly backlog: Backlog;
}

async function open(h: Harness, connected: AnyConnected, prefix: string) {
  const name = uniqueName(prefix);
  const source = h.source(name);
  const collector = new Collector(await connected.subscribe(source));
  const publisher = await h.publisher(connected);
  return { name, collector, publisher };
}

export const routingScenarios: readonly Scenario<RoutingContext>[] = [
  {
    name: "delivers in publish order",
    run: ({ h }) =>
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
    run: ({ h, backlog }) =>
      withConnection(h, async (connected) => {
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
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected, "ack");
        await publisher.publish({ name, payload: bytes("once") });
        const [d] = await collector.waitFor(1, h.arrivalMs, "first delivery");
        await d!.ack();
        await collector.quiet(1, h.silenceMs, "after ack");
        await collector.stop();
      }),
  },
  {
    name: "a requeued delivery comes back",
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected, "requeue");
        await publisher.publish({ name, payload: bytes("again") });
        const [d] = await collector.waitFor(1, h.arrivalMs, "first delivery");
        const answer = await d!.nack({ requeue: true });
        if (answer === "unsupported") {
          await d!.ack();
        } else {
          const got = await collector.waitFor(2, h.arrivalMs, "requeued delivery");
          expect(text(got[1]!.payload)).toBe("again");
          await ackAll(got);
        }
        await collector.stop();
      }),
  },
  {
    name: "a dropped delivery stays gone",
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected, "drop");
        await publisher.publish({ name, payload: bytes("gone") });
        const [d] = await collector.waitFor(1, h.arrivalMs, "first delivery");
        if ((await d!.nack({ requeue: false })) === "unsupported") await d!.ack();
        await collector.quiet(1, h.silenceMs, "after drop");
        await collector.stop();
      }),
  },
  {
    name: "headers arrive",
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected, "headers");
        const headers = new HeaderMap({ "content-type": "application/json", "X-Tenant": "acme" });
        await publisher.publish({ name, payload: bytes("{}"), headers });
        const [d] = await collector.waitFor(1, h.arrivalMs, "delivery with headers");
        expect(d!.headers.getString("content-type")).toBe("application/json");
        expect(d!.headers.getString("x-tenant")).toBe("acme");
        await d!.ack();
        await collector.stop();
      }),
  },
];

/** Registers the routing suite: order, backlog, ack, requeue, drop and headers. */
export function routing<TConnected extends AnyConnected>(
  factories: RoutingFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  registerSuite(
    "routing",
    routingScenarios,
    { h, backlog: factories.backlog },
    h.arrivalMs * 3 + h.silenceMs * 2,
  );
}
