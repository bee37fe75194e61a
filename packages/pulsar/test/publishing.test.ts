import {
  HeaderMap,
  isRustStreamError,
  type PublishOptionsOf,
  RustStream,
  systemClock,
} from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import {
  type ConnectedPulsarBroker,
  PulsarBroker,
  PulsarExclusive,
  type PulsarPublishOptions,
  PulsarShared,
} from "../src/index.js";
import { createPartitionedTopic, eventually, topicStats } from "./env.js";

// What a publish refuses before sending, and Pulsar's own per-message options, on the broker and
// in-process alike.

const open: ConnectedPulsarBroker[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.shutdown();
});

async function live(): Promise<ConnectedPulsarBroker> {
  const c = await new PulsarBroker({ url: requireEnv("PULSAR_URL") }).connect();
  open.push(c);
  return c;
}

async function inProcess(partitioned: Record<string, number> = {}): Promise<ConnectedPulsarBroker> {
  const c = await new PulsarBroker({
    url: "pulsar://in-process.invalid",
    inProcess: { partitionedTopics: partitioned },
  }).connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock });
  open.push(c);
  return c;
}

async function refusal(work: () => Promise<unknown> | unknown): Promise<string> {
  try {
    await work();
    return "accepted";
  } catch (error) {
    return isRustStreamError(error) ? `${error.code}: ${error.message}` : String(error);
  }
}

async function nextOf(connected: ConnectedPulsarBroker, topic: string) {
  const sub = await connected.subscribe(new PulsarShared(topic, { subscription: "p" }));
  return {
    sub,
    async next() {
      const got = await sub.next();
      if (got.done) throw new Error("ended");
      return got.value;
    },
  };
}

for (const [mode, connect] of [
  ["the broker", () => live()],
  ["in-process", () => inProcess()],
] as const) {
  describe(`refused before sending, on ${mode}`, () => {
    it("a payload over the broker's max_message_size, while the connection stays up", async () => {
      const connected = await connect();
      const topic = uniqueName("big");
      const reader = await nextOf(connected, topic);
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      const big = new Uint8Array(5 * 1024 * 1024 + 1);
      expect(await refusal(() => publisher.publish({ name: topic, payload: big }))).toMatch(
        /^publish-refused: a message of 5242881 bytes exceeds the broker's max_message_size of 5242880 bytes/,
      );
      // The same connection publishes and reads on.
      await publisher.publish({ name: topic, payload: bytes("after") });
      const d = await reader.next();
      expect(text(d.payload)).toBe("after");
      await d.ack();
    });

    it("a header value that is not UTF-8, and a partition key that is not", async () => {
      const connected = await connect();
      const topic = uniqueName("binary");
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      const headers = new HeaderMap({ "x-bin": new Uint8Array([0xff, 0xfe, 0x00]) });
      expect(
        await refusal(() => publisher.publish({ name: topic, payload: bytes("x"), headers })),
      ).toMatch(
        /^publish-refused: header "x-bin" .* is not UTF-8 text, and Pulsar properties are strings/,
      );
      expect(
        await refusal(() =>
          publisher.publish({
            name: topic,
            payload: bytes("x"),
            partitionKey: new Uint8Array([0xc3]),
          }),
        ),
      ).toMatch(/^publish-refused: the partition key .* is not UTF-8 text/);
      // Text with NUL, CR and LF is UTF-8: it travels as it is.
      const reader = await nextOf(connected, topic);
      await publisher.publish({
        name: topic,
        payload: bytes("y"),
        headers: new HeaderMap({ "x-text": "a\u0000\r\nb", "x-empty": "" }),
      });
      const d = await reader.next();
      expect(d.headers.getString("x-text")).toBe("a\u0000\r\nb");
      expect(d.headers.getString("x-empty")).toBe("");
      await d.ack();
    });

    it("options it cannot use", async () => {
      const connected = await connect();
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      const name = uniqueName("options");
      expect(
        await refusal(() =>
          publisher.publish({
            name,
            payload: bytes("x"),
            options: { deliverAt: Date.now(), deliverAfterMs: 5 },
          }),
        ),
      ).toMatch(/^invalid-argument: .*both deliverAt and deliverAfterMs/);
      expect(await refusal(() => publisher.publish({ name: "a/b", payload: bytes("x") }))).toMatch(
        /^invalid-argument: invalid Pulsar topic name/,
      );
    });
  });

  describe(`Pulsar's per-message options, on ${mode}`, () => {
    it("deliverAfterMs holds the message on a Shared subscription; eventTime and orderingKey arrive", async () => {
      const connected = await connect();
      const topic = uniqueName("later");
      const reader = await nextOf(connected, topic);
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      const sent = Date.now();
      await publisher.publish({
        name: topic,
        payload: bytes("later"),
        options: {
          deliverAfterMs: 300,
          eventTime: new Date(1_700_000_000_000),
          orderingKey: "ok-1",
        },
      });
      const d = await reader.next();
      expect(Date.now() - sent).toBeGreaterThanOrEqual(290);
      expect(text(d.payload)).toBe("later");
      expect(d.eventTime).toBe(1_700_000_000_000);
      expect(text(d.orderingKey!)).toBe("ok-1");
      await d.ack();
    });

    it("an Exclusive subscription gets a delayed message at once, as the broker dispatches there", async () => {
      const connected = await connect();
      const topic = uniqueName("at-once");
      const sub = await connected.subscribe(new PulsarExclusive(topic, { subscription: "x" }));
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      const sent = Date.now();
      await publisher.publish({
        name: topic,
        payload: bytes("now"),
        options: { deliverAfterMs: 3000 },
      });
      const got = await sub.next();
      expect(Date.now() - sent).toBeLessThan(2500);
      if (got.done) throw new Error(`${topic}: the subscription ended before the delayed message`);
      expect(text(got.value.payload)).toBe("now");
      await got.value.ack();
    });
  });
}

describe("an explicit partition", () => {
  for (const [mode, connect] of [
    [
      "the broker",
      async (topic: string) => {
        await createPartitionedTopic(topic, 3);
        return live();
      },
    ],
    ["in-process", (topic: string) => inProcess({ [topic]: 3 })],
  ] as const) {
    it(`goes to that partition, whatever its key, on ${mode}`, async () => {
      const topic = uniqueName("part");
      const connected = await connect(topic);
      const sub = await connected.subscribe(
        new PulsarShared(topic, { subscription: "p", partitioned: true }),
      );
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      for (const partition of [2, 0, 1]) {
        await publisher.publish({
          name: topic,
          payload: bytes(`to-${partition}`),
          partitionKey: "same",
          options: { partition },
        });
      }
      const seen = new Map<string, number | undefined>();
      for (let i = 0; i < 3; i++) {
        const got = await sub.next();
        seen.set(text(got.value!.payload), got.value!.partition);
        await got.value!.ack();
      }
      expect(Object.fromEntries(seen)).toEqual({ "to-0": 0, "to-1": 1, "to-2": 2 });
    });
  }
});

describe("a bare name", () => {
  it("subscribes with the broker's subscription, else the app's name, else says how to give one", async () => {
    const broker = new PulsarBroker({
      url: "pulsar://in-process.invalid",
      subscription: "billing",
    });
    const withOption = await broker.connectInProcess({
      coordinator: new CountingCoordinator(),
      clock: systemClock,
    });
    open.push(withOption);
    expect(withOption.source("orders")).toMatchObject({
      subscription: "billing",
      subscriptionType: "Shared",
    });
    const app = await new PulsarBroker({ url: "pulsar://in-process.invalid" }).connectInProcess({
      coordinator: new CountingCoordinator(),
      clock: systemClock,
      app: { name: "orders-service", version: "1.0.0" },
    });
    open.push(app);
    expect(app.source("orders").subscription).toBe("orders-service");
    const bare = await inProcess();
    expect(() => bare.source("orders")).toThrow(
      /none is set: connect the broker through an app .*, give PulsarBroker a subscription option/,
    );
    await expect(bare.subscribe(new PulsarShared("orders"))).rejects.toThrow(/has no subscription/);
    expect(() => new PulsarExclusive("orders", {} as { subscription: string })).toThrow(
      /needs a subscription/,
    );
  });
});

describe("types", () => {
  it("handlers get Pulsar's publish options typed, from the broker they are mounted on", () => {
    expectTypeOf<PublishOptionsOf<PulsarBroker>>().toEqualTypeOf<PulsarPublishOptions>();
    new RustStream({ name: "typed", version: "1.0.0" }).broker(
      new PulsarBroker({ url: "pulsar://in-process.invalid" }),
      (b) => {
        b.subscriber("orders")
          .publishes({ audit: "audit" })
          .handle(async (_m, ctx) => {
            await ctx.out.audit.publish({}, { options: { deliverAfterMs: 10, orderingKey: "k" } });
            // @ts-expect-error: not a Pulsar option
            await ctx.out.audit.publish({}, { options: { partitionKey: "k" } });
          });
      },
    );
  });
});

describe("idle producers", () => {
  it("a producer nothing used for producerIdleMs is closed, and the next publish opens another", async () => {
    const connected = await new PulsarBroker({
      url: requireEnv("PULSAR_URL"),
      // Long enough that the admin call right after the publish sees the producer still open on a
      // loaded machine (at 200 ms it was closed before the stats answered, under a load of 17-20).
      producerIdleMs: 2000,
    }).connect();
    open.push(connected);
    const topic = uniqueName("idle");
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: topic, payload: bytes("one") });
    expect((await topicStats(topic)).publishers.length).toBe(1);
    await eventually(
      async () => (await topicStats(topic)).publishers.length === 0,
      15_000,
      "the idle producer closed",
    );
    await publisher.publish({ name: topic, payload: bytes("two") });
    expect((await topicStats(topic)).publishers.length).toBe(1);
  });
});
