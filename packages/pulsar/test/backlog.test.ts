import {
  type BacklogCounts,
  type Broker,
  isRustStreamError,
  type RuntimeEvent,
  RustStream,
  type SubscriptionEvent,
  systemClock,
} from "@ruststream/core";
import { brokerMark, CountingCoordinator, reportsBacklog } from "@ruststream/core/broker";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, test } from "vitest";
import {
  type ConnectedPulsarBroker,
  PulsarBroker,
  PulsarExclusive,
  PulsarShared,
} from "../src/index.js";
import { eventually } from "./env.js";

// A Pulsar subscription's backlog (what @ruststream/metrics' gauge reads) from the broker's
// CONSUMER_STATS answer: the same steps on the real broker and on the in-process stand-in, which
// must answer the same counts.

const live = () => new PulsarBroker({ url: requireEnv("PULSAR_URL") });
/** The stand-in, as TestApp's in-process mode connects it. */
const inProcess = (): Broker<ConnectedPulsarBroker> => {
  const server = new PulsarBroker({ url: "pulsar://in-process.invalid" });
  return {
    [brokerMark]: "pulsar",
    connect: () =>
      server.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
  };
};

interface Seen {
  readonly shared: BacklogCounts;
  readonly exclusive: BacklogCounts;
}

/**
 * One app with two subscriptions to one topic, each with two workers: a Shared one and an
 * Exclusive one. One message is handled and acknowledged; two are held in each subscription's
 * handlers; two more wait in the receiver queues behind them; one is delayed by an hour.
 */
async function scenario(broker: Broker<ConnectedPulsarBroker>): Promise<Seen> {
  const topic = uniqueName("backlog");
  const events: RuntimeEvent[] = [];
  const entered: Record<string, string[]> = { shared: [], exclusive: [] };
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const app = new RustStream({ name: "backlog", version: "1.0.0" }).broker(broker, (b) => {
    for (const [mount, source] of [
      ["shared", new PulsarShared(topic, { subscription: "shared", initialPosition: "earliest" })],
      [
        "exclusive",
        new PulsarExclusive(topic, { subscription: "exclusive", initialPosition: "earliest" }),
      ],
    ] as const) {
      b.subscriber<string>(source)
        .name(mount)
        .workers(2)
        .handle(async (m) => {
          entered[mount]!.push(m);
          if (m !== "done") await held;
        });
    }
  });
  app.observe((e) => events.push(e));
  const running = await app.start();
  try {
    const backlogOf = (mount: string) => {
      const started = events.find(
        (e): e is SubscriptionEvent =>
          e.type === "subscription" && e.state === "started" && e.subscriber === mount,
      );
      const backlog = started?.backlog;
      if (backlog === undefined) throw new Error(`the ${mount} subscription carries no backlog`);
      return backlog;
    };
    await running.publish(topic, "done");
    await eventually(
      () => entered.shared!.length === 1 && entered.exclusive!.length === 1,
      10_000,
      "the first message handled",
    );
    for (const m of ["hold 1", "hold 2", "a", "b"]) await running.publish(topic, m);
    await running.publish(topic, "later", { options: { deliverAfterMs: 3_600_000 } });
    await eventually(
      () => entered.shared!.length === 3 && entered.exclusive!.length === 3,
      10_000,
      "both handlers held",
    );
    // The acknowledgement of "done" is sent without an answer: wait until the broker counts it.
    const expected = expectedCounts();
    let seen: Seen | undefined;
    await eventually(
      async () => {
        seen = { shared: await backlogOf("shared")(), exclusive: await backlogOf("exclusive")() };
        return (
          JSON.stringify(seen.shared) === JSON.stringify(expected.shared) &&
          JSON.stringify(seen.exclusive) === JSON.stringify(expected.exclusive)
        );
      },
      10_000,
      `the counts ${JSON.stringify(expected)} (last seen ${JSON.stringify(seen)})`,
    ).catch((error: unknown) => {
      // The test's assertion shows what differs; a failure to ask at all is the failure.
      if (seen === undefined) throw error;
    });
    // Nothing more was handed over meanwhile: both handlers are still held.
    expect(entered.shared).toEqual(["done", "hold 1", "hold 2"]);
    return seen!;
  } finally {
    release();
    await running.stop();
  }
}

/**
 * `ready`: the five not acknowledged (two held, two queued, the delayed one) on both. `leased`
 * on Shared only: the four dispatched to its consumer (the delayed one is not due); the broker
 * does not count what it dispatched on an Exclusive subscription.
 */
const expectedCounts = (): Seen => ({
  shared: { ready: 5, leased: 4 },
  exclusive: { ready: 5 },
});

describe("a Pulsar subscription's backlog", () => {
  test("on the real broker: ready (msgBacklog: not acknowledged, dispatched and delayed included), leased on Shared (this consumer's unackedMessages)", async () => {
    expect(await scenario(live())).toEqual(expectedCounts());
  });

  test("the in-process stand-in answers the same counts", async () => {
    expect(await scenario(inProcess())).toEqual(expectedCounts());
  });

  test("the topic deleted under the subscription (its consumer closed, not attached again yet): backlog() rejects at once, naming the subscription and topic", async () => {
    const topic = uniqueName("gone");
    const connected = await live().connect();
    try {
      const subscription = await connected.subscribe(
        new PulsarShared(topic, { subscription: "gone" }),
      );
      expect(reportsBacklog(subscription)).toBe(true);
      if (!reportsBacklog(subscription)) return;
      expect(await subscription.backlog()).toEqual({ ready: 0, leased: 0 });
      const response = await fetch(
        `${requireEnv("PULSAR_ADMIN_URL")}/admin/v2/persistent/public/default/${topic}?force=true`,
        { method: "DELETE" },
      );
      expect(response.status).toBeLessThan(300);
      const error = await subscription.backlog().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRustStreamError(error)).toBe(true);
      expect(String((error as Error).message)).toContain(`the backlog of gone on`);
      expect(String((error as Error).message)).toContain(topic);
      expect(String((error as Error).message)).toContain("not attached to the broker");
    } finally {
      await connected.shutdown();
    }
  });
});
