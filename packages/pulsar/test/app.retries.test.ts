import {
  headerNames,
  type Outcome,
  RustStream,
  readDeadLetterOrigin,
  retry,
} from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import {
  PulsarBroker,
  type PulsarDelivery,
  PulsarExclusive,
  PulsarShared,
  type PulsarSource,
} from "../src/index.js";
import { eventually } from "./env.js";

// Whole apps through the runtime: how a retry comes back on each kind of subscription, and a cap
// that leaves exactly the messages that always fail in the dead letter, once each.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const live = () => new PulsarBroker({ url: requireEnv("PULSAR_URL") });
const inProcess = () => new PulsarBroker({ url: "pulsar://in-process.invalid" });

interface Seen {
  readonly attempt: number;
  readonly redeliveryCount: number | undefined;
  readonly retryCount: string | undefined;
  readonly fromRetryTopic: boolean;
}

function sideBySide(broker: PulsarBroker, topic: string, seen: Record<string, Seen[]>) {
  const record = (
    mount: string,
    delivery: PulsarDelivery,
    attempt: number,
  ): Outcome | undefined => {
    const list = seen[mount] ?? [];
    seen[mount] = list;
    list.push({
      attempt,
      redeliveryCount: delivery.redeliveryCount,
      retryCount: delivery.headers.getString(headerNames.retryCount),
      fromRetryTopic: delivery.fromRetryTopic,
    });
    return attempt === 1 ? retry() : undefined;
  };
  return new RustStream({ name: "side-by-side", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber(new PulsarShared(topic, { subscription: "shared" }))
      .name("shared")
      .handle((_m, ctx) => record("shared", ctx.delivery as PulsarDelivery, ctx.attempt));
    b.subscriber(new PulsarExclusive(topic, { subscription: "exclusive" }))
      .name("exclusive")
      .handle((_m, ctx) => record("exclusive", ctx.delivery as PulsarDelivery, ctx.attempt));
  });
}

const expectedSideBySide = {
  // The broker redelivers a negative ack and counts it.
  shared: [
    { attempt: 1, redeliveryCount: 1, retryCount: undefined, fromRetryTopic: false },
    { attempt: 2, redeliveryCount: 2, retryCount: undefined, fromRetryTopic: false },
  ],
  // No count there: the copy on the retry topic carries it.
  exclusive: [
    { attempt: 1, redeliveryCount: undefined, retryCount: undefined, fromRetryTopic: false },
    { attempt: 2, redeliveryCount: undefined, retryCount: "1", fromRetryTopic: true },
  ],
};

describe("Exclusive and Shared redelivery side by side", () => {
  it("on the real broker: Shared by the broker's count, Exclusive by a counted copy", async () => {
    const topic = uniqueName("side");
    const seen: Record<string, Seen[]> = {};
    t = await TestApp.startLive(sideBySide(live(), topic, seen));
    await t.publish(topic, { n: 1 });
    await eventually(() => seen.shared?.length === 2 && seen.exclusive?.length === 2);
    await t.settle();
    expect(seen).toEqual(expectedSideBySide);
  });

  it("in-process: the same", async () => {
    const topic = uniqueName("side");
    const seen: Record<string, Seen[]> = {};
    t = await TestApp.start(sideBySide(inProcess(), topic, seen));
    await t.publish(topic, { n: 1 });
    expect(seen).toEqual(expectedSideBySide);
  });
});

interface Job {
  readonly id: number;
}

/** Twelve jobs; every third always fails. */
function cappedApp(broker: PulsarBroker, source: PulsarSource, calls: Map<number, number>) {
  return new RustStream({ name: "capped", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber<Job>(source)
      .maxAttempts(3)
      .deadLetter(source.deadLetterTopic)
      .onFailure({ backoff: { initialMs: 10, maxMs: 20 } })
      .handle((job) => {
        calls.set(job.id, (calls.get(job.id) ?? 0) + 1);
        if (job.id % 3 === 0) throw new Error(`job ${job.id} always fails`);
      });
  });
}

const jobs = [...Array(12).keys()];
const failing = jobs.filter((id) => id % 3 === 0);

async function readDeadLetters(topic: string, subscription: string, count: number) {
  const connected = await live().connect();
  try {
    // The dead-letter topic was created with the app's subscription: it kept every copy.
    const sub = await connected.subscribe(
      new PulsarShared(topic, { subscription, initialPosition: "earliest" }),
    );
    const got: PulsarDelivery[] = [];
    const deadline = Date.now() + 15_000;
    while (got.length < count + 1 && Date.now() < deadline) {
      const batch = await Promise.race([
        sub.nextBatch(64),
        new Promise<readonly PulsarDelivery[]>((resolve) => setTimeout(() => resolve([]), 1000)),
      ]);
      if (batch.length === 0 && got.length >= count) break;
      got.push(...batch);
    }
    for (const d of got) await d.ack();
    await sub.close();
    return got;
  } finally {
    await connected.shutdown();
  }
}

describe("a cap and a dead letter through a whole app", () => {
  for (const [kind, make] of [
    [
      "Shared (the cap applied by this client)",
      (topic: string) => new PulsarShared(topic, { subscription: "capped" }),
    ],
    [
      "Exclusive (the cap applied by the runtime)",
      (topic: string) => new PulsarExclusive(topic, { subscription: "capped" }),
    ],
  ] as const) {
    it(`${kind}: the dead letter holds exactly the capped messages, once each`, async () => {
      const topic = uniqueName("capped");
      const source = make(topic);
      const calls = new Map<number, number>();
      t = await TestApp.startLive(cappedApp(live(), source, calls), { withinMs: 20_000 });
      for (const id of jobs) await t.running.publish(topic, { id });
      await eventually(
        () => failing.every((id) => calls.get(id) === 3) && jobs.every((id) => calls.has(id)),
        20_000,
        "every job handled, the failing ones three times",
      );
      await t.settle();
      const dead = await readDeadLetters(source.deadLetterTopic, "capped", failing.length);
      const ids = dead.map((d) => (JSON.parse(text(d.payload)) as Job).id).sort((a, b) => a - b);
      expect(ids).toEqual(failing);
      for (const d of dead) {
        const origin = readDeadLetterOrigin(d.headers);
        expect(origin?.source).toBe(topic);
        expect(origin?.reason).toBe("max-attempts");
        expect(d.headers.getString("real_topic")).toBe(`persistent://public/default/${topic}`);
        expect(d.headers.getString("origin_message_id")).toMatch(/^(retry:)?\d+:\d+:-1:-?\d+$/);
        // Its three deliveries, counted the same whichever of the two applied the cap.
        expect(d.headers.getString(headerNames.retryCount)).toBe("3");
      }
      expect(Object.fromEntries(calls)).toEqual(
        Object.fromEntries(jobs.map((id) => [id, id % 3 === 0 ? 3 : 1])),
      );
    });
  }

  it("in-process, Shared: the same count, the copies in published()", async () => {
    const topic = uniqueName("capped");
    const source = new PulsarShared(topic, { subscription: "capped" });
    const calls = new Map<number, number>();
    t = await TestApp.start(cappedApp(inProcess(), source, calls));
    for (const id of jobs) await t.publish(topic, { id });
    const dead = t.published(source.deadLetterTopic).map((m) => (m.value as Job).id);
    expect(dead.sort((a, b) => a - b)).toEqual(failing);
    expect(failing.map((id) => calls.get(id))).toEqual([3, 3, 3, 3]);
  });
});
