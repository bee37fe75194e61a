import {
  type BrokerMovesSource,
  HeaderMap,
  headerNames,
  type ReadonlyHeaderMap,
} from "@ruststream/core";
import { attemptOf } from "@ruststream/core/broker";
import { expect } from "vitest";
import { bytes, text } from "../helpers/payloadText.js";
import { uniqueName } from "../helpers/uniqueName.js";
import {
  type AnyConnected,
  type BrokerFactories,
  type Harness,
  harnessOf,
  withConnection,
} from "./harness.js";
import { ackAll, Collector, elsewhere, isSentinel, throughSentinel, waitUntil } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

function expectHeaders(actual: ReadonlyHeaderMap, sent: ReadonlyHeaderMap, step: string): void {
  for (const [name, value] of sent) {
    expect(actual.get(name), `${step}: header "${name}"`).toEqual(value);
  }
}

/** Every header of `earlier` but the retry count, byte for byte, and no header it did not have. */
function expectSameButCount(
  actual: ReadonlyHeaderMap,
  earlier: ReadonlyHeaderMap,
  step: string,
): void {
  const names = (headers: ReadonlyHeaderMap) =>
    [...headers]
      .map(([name]) => name)
      .filter((name) => name !== headerNames.retryCount)
      .sort();
  expect(names(actual), `${step}: header names`).toEqual(names(earlier));
  for (const [name, value] of earlier) {
    if (name === headerNames.retryCount) continue;
    expect(actual.get(name), `${step}: header "${name}"`).toEqual(value);
  }
}

/** The retry-count header as a number; it must stay decimal text once a message carries it. */
function retryCountOf(headers: ReadonlyHeaderMap, step: string): number {
  const value = headers.getString(headerNames.retryCount);
  expect(value, `${step}: the retry-count header is kept`).toMatch(/^(0|[1-9][0-9]*)$/);
  return Number(value);
}

export interface RedeliveryAddressFactories<TConnected extends AnyConnected>
  extends BrokerFactories<TConnected> {
  /**
   * Whether two subscriptions of one subject each receive every message (pub/sub, a consumer name
   * each) rather than share them (a consumer group, a queue). Declared, not found out: a count of
   * who got a message, taken once nothing more came for a while, miscounts a subscription that lags.
   * Default `false`.
   */
  readonly fanOut?: boolean;
}

interface RedeliveryAddressContext {
  readonly h: Harness;
  readonly fanOut: boolean;
}

export const redeliveryAddressScenarios: readonly Scenario<RedeliveryAddressContext>[] = [
  {
    name: "a copy sent to the redelivery address arrives like a control message",
    run: ({ h, fanOut }) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("address");
        const source = h.source(name);
        if (source.copies !== "addressed") {
          throw new Error(
            `makeSource gave a "${source.copies}" source; this suite needs "addressed"`,
          );
        }
        // One subscription per receiver a message has: two where each gets its own, else one, since
        // of two sharing subscriptions either may get a message and the other's silence proves
        // nothing.
        const collectors: Collector[] = [];
        for (let i = 0; i < (fanOut ? 2 : 1); i++) {
          collectors.push(new Collector(await connected.subscribe(h.source(name))));
        }
        const publisher = await h.publisher(connected);
        await publisher.publish({ name, payload: bytes("control") });
        for (const [i, c] of collectors.entries()) {
          await c.waitFor(1, h.arrivalMs, `control on subscription ${i + 1}`);
        }
        await ackAll(collectors.flatMap((c) => c.items));
        const headers = new HeaderMap()
          .set(headerNames.retryCount, "1")
          .set("x-conformance-copy", bytes("copy\u0000\r\n"));
        const before = collectors.map((c) => c.items.length);
        await elsewhere(() =>
          publisher.publish({ name: source.redeliveryAddress, payload: bytes("copy"), headers }),
        );
        // A sentinel sent the same way behind the copy: each subscription reads in order, so once
        // the sentinel reached it, every copy on its way there, a second one included, has arrived.
        await publisher.publish({ name: source.redeliveryAddress, payload: bytes("sentinel") });
        const sentinelAt = (c: Collector, i: number) =>
          c.items.findIndex((d, at) => at >= before[i]! && isSentinel(d));
        await waitUntil(h.arrivalMs, "copies: reading to the sentinel", () =>
          collectors.every((c, i) => sentinelAt(c, i) >= 0),
        );
        for (const [i, c] of collectors.entries()) {
          const copies = c.items.slice(before[i], sentinelAt(c, i));
          expect(
            copies.map((d) => text(d.payload)),
            `subscription ${i + 1}: the copy arrives once, as the control did`,
          ).toEqual(["copy"]);
          expectHeaders(copies[0]!.headers, headers, `copy on subscription ${i + 1}`);
        }
        await ackAll(collectors.flatMap((c) => c.items));
        for (const c of collectors) await c.stop();
      }),
  },
  {
    name: "a requeue keeps every header but the retry count byte for byte, and counts each delivery once",
    needs: ["requeue"],
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("recount");
        const collector = new Collector(await connected.subscribe(h.source(name)));
        const publisher = await h.publisher(connected);
        // Not 0: the message is already a copy that came back twice, so a broker must add to the
        // count it carries, never restart it or write its own delivery count into it.
        const initial = 2;
        const headers = new HeaderMap({
          "x-trace": "t-1",
          "x-bin": bytes("a\u0000\r\n"),
          [headerNames.retryCount]: String(initial),
        });
        await publisher.publish({ name, payload: bytes("again"), headers });
        let first: ReadonlyHeaderMap | undefined;
        let previous = initial;
        for (let attempt = 1; attempt <= 3; attempt++) {
          const step = `delivery ${attempt}`;
          const got = await collector.waitFor(attempt, h.arrivalMs, step);
          const d = got[attempt - 1]!;
          if (first === undefined) {
            expectHeaders(d.headers, headers, step);
            first = d.headers.clone();
          } else {
            expectSameButCount(d.headers, first, step);
          }
          const count = retryCountOf(d.headers, step);
          expect(
            count - previous,
            `${step}: the retry count grows by at most one per requeue`,
          ).toBeGreaterThanOrEqual(0);
          expect(
            count - previous,
            `${step}: the retry count grows by at most one per requeue`,
          ).toBeLessThanOrEqual(1);
          previous = count;
          // The runtime's attempt: the header plus the broker's count. A broker counts a requeue in
          // one of them, never both and never neither.
          expect(
            count + (d.redeliveryCount ?? 1) - initial,
            `${step}: retry-count header (${count}) + redeliveryCount (${d.redeliveryCount}) - ${initial}`,
          ).toBe(attempt);
          if (attempt === 3) await ackAll([d]);
          else expect(await d.nack({ requeue: true }), `${step}: requeue`).toBe("ok");
        }
        await collector.stop();
      }),
  },
];

export interface BrokerMovedRetryFactories<TConnected extends AnyConnected>
  extends BrokerFactories<TConnected> {
  /** The `maxAttempts` the suite declares (default 3). */
  readonly attempts?: number;
}

interface BrokerMovedContext {
  readonly h: Harness;
  readonly attempts: number;
}

function movingSource(h: Harness, name: string): BrokerMovesSource {
  const source = h.source(name);
  if (source.copies !== "broker") {
    throw new Error(`makeSource gave a "${source.copies}" source; this suite needs "broker"`);
  }
  return source;
}

async function expectRefused(step: string, work: () => Promise<unknown>): Promise<void> {
  let refused = false;
  try {
    const subscription = (await work()) as { close(): Promise<void> };
    await subscription.close();
  } catch {
    refused = true;
  }
  if (!refused) throw new Error(`${step}: subscribing with half a retry declaration was accepted`);
}

export const brokerMovedRetryScenarios: readonly Scenario<BrokerMovedContext>[] = [
  {
    name: "half a retry declaration is refused",
    run: ({ h }) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("half");
        const source = movingSource(h, name);
        await expectRefused("maxAttempts alone", () =>
          connected.subscribe(source.declareRetry({ maxAttempts: 2 })),
        );
        await expectRefused("deadLetter alone", () =>
          connected.subscribe(source.declareRetry({ deadLetter: `${name}-dlq` })),
        );
      }),
  },
  {
    name: "a message that always fails reaches the dead letter after exactly maxAttempts",
    needs: ["requeue"],
    run: ({ h, attempts }) =>
      withConnection(h, async (connected) => {
        const name = uniqueName("moves");
        const deadLetter = `${name}-dlq`;
        const source = movingSource(h, name).declareRetry({ maxAttempts: attempts, deadLetter });
        const dead = new Collector(await connected.subscribe(h.source(deadLetter)));
        const live = new Collector(await connected.subscribe(source));
        const publisher = await h.publisher(connected);
        await publisher.publish({ name, payload: bytes("poison") });
        for (let attempt = 1; attempt <= attempts; attempt++) {
          const got = await live.waitFor(attempt, h.arrivalMs, `delivery ${attempt}`);
          const d = got[attempt - 1]!;
          // The broker counts to move the message at the cap, so it reports its count.
          expect(d.redeliveryCount, `delivery ${attempt}: redeliveryCount`).toBe(attempt);
          expect(await d.nack({ requeue: true }), `delivery ${attempt}: requeue`).toBe("ok");
        }
        const [moved] = await dead.waitFor(1, h.arrivalMs, "dead-lettered copy");
        expect(text(moved!.payload)).toBe("poison");
        // The dead letter says how many deliveries the message had, as the runtime's own do.
        expect(
          moved!.headers.getString(headerNames.retryCount),
          "the dead-lettered copy's retry count",
        ).toBe(String(attempts));
        // ...and its first delivery there is attempt 1, so the dead letter's own subscriber gets
        // its own attempts rather than starting past the source's cap.
        expect(attemptOf(moved!), "the dead-lettered copy's attempt at the dead letter").toBe(1);
        await moved!.ack();
        // Sentinels behind the last nack and the move, each arriving next, show that no further
        // delivery and no second dead-lettered copy was on its way, however slowly.
        const after = await throughSentinel(publisher, live, name, h.arrivalMs, "live");
        expect(after.slice(attempts), "no delivery after the last attempt").toEqual(["sentinel"]);
        const moves = await throughSentinel(publisher, dead, deadLetter, h.arrivalMs, "dead");
        expect(moves, "exactly one dead-lettered copy").toEqual(["poison", "sentinel"]);
        await ackAll([live.items[attempts]!, dead.items[1]!]);
        await live.quiet(attempts + 1, h.silenceMs, "no delivery after the sentinel");
        await dead.quiet(2, 0, "no dead-lettered copy after the sentinel");
        await live.stop();
        await dead.stop();
      }),
  },
];

/** Registers the suite for sources whose retry copies this process publishes to an address. */
export function redeliveryAddress<TConnected extends AnyConnected>(
  factories: RedeliveryAddressFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  registerSuite(
    "retry via a redelivery address",
    redeliveryAddressScenarios,
    { h, fanOut: factories.fanOut ?? false },
    h.capabilities,
    h.arrivalMs * 5,
  );
}

/** Registers the suite for sources whose broker moves failing messages to a dead letter. */
export function brokerMovedRetry<TConnected extends AnyConnected>(
  factories: BrokerMovedRetryFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  const attempts = factories.attempts ?? 3;
  registerSuite(
    "broker-moved retry and dead letter",
    brokerMovedRetryScenarios,
    { h, attempts },
    h.capabilities,
    h.arrivalMs * (attempts + 4) + h.silenceMs * 2,
  );
}
