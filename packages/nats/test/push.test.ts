import { AckPolicy, jetstreamManager } from "@nats-io/jetstream";
import { ManualClock, RustStream, type RustStreamError } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { TestApp } from "@ruststream/testing";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  JetStreamPosition,
  JetStreamSubject,
  NatsBroker,
  NatsPublish,
  type PushBinding,
} from "../src/index.js";
import type { JetStreamSubscription } from "../src/jetstream/jetStreamSubscription.js";
import { consumerState, eventually, rawClient } from "./env.live.js";
import { liveBroker, madeInEachTest } from "./liveTest.js";

// A JetStreamSubject bound to a durable push consumer: the server pushes to its deliver subject
// (in a deliver group when it has one), and the deliveries are settled as a pull consumer's. On
// the real server and on the stand-in, which serves a push consumer's clients as a pull
// consumer's and refuses the bindings the server refuses.

const made = madeInEachTest();

/** Connections to one server: the shared one, or one stand-in (one broker object, one clock). */
const places: [string, () => () => Promise<ConnectedNatsBroker>][] = [
  ["the real server", () => () => liveBroker().connect()],
  [
    "the stand-in",
    () => {
      const broker = new NatsBroker({ servers: "nats://in-process.invalid:4222" });
      const clock = new ManualClock();
      return () => broker.connectInProcess({ coordinator: new CountingCoordinator(), clock });
    },
  ],
];

function pushSource(subject: string, push: PushBinding, extra: { ackWaitMs?: number } = {}) {
  return new JetStreamSubject(subject, {
    stream: subject,
    durable: "pushed",
    push,
    ...extra,
    declare: { subjects: [subject], storage: "memory" },
  });
}

async function opened(connect: () => Promise<ConnectedNatsBroker>) {
  return made.connection(await connect());
}

async function publishAll(connected: ConnectedNatsBroker, subject: string, payloads: string[]) {
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  for (const p of payloads) await publisher.publish({ name: subject, payload: bytes(p) });
}

for (const [where, server] of places) {
  describe(`a push consumer, ${where}`, () => {
    it("hands N messages over in order, each acked", async () => {
      const connect = server();
      const connected = await opened(connect);
      const subject = uniqueName("push");
      made.streams.push(subject);
      const subscription = await connected.subscribe(
        pushSource(subject, {
          declare: {
            deliverSubject: `${subject}.deliver`,
            idleHeartbeatMs: 1000,
            flowControl: true,
          },
        }),
      );
      const sent = Array.from({ length: 20 }, (_, i) => `m${i}`);
      await publishAll(connected, subject, sent);
      const got: string[] = [];
      while (got.length < sent.length) {
        const d = (await subscription.next()).value;
        if (d === undefined) throw new Error("the subscription ended");
        got.push(text(d.payload));
        expect(d.redeliveryCount).toBe(1);
        await d.ack();
      }
      expect(got).toEqual(sent);
      if (where === "the real server") {
        await connected.link.settlementsWritten();
        const state = await consumerState(subject, "pushed");
        expect(state.ackPending).toBe(0);
        expect(state.ackFloor).toBe(20);
      }
    });

    it("hands a nak'd message over again, its attempt counted by the server", async () => {
      const connected = await opened(server());
      const subject = uniqueName("pushnak");
      made.streams.push(subject);
      const subscription = await connected.subscribe(
        pushSource(subject, { declare: { deliverSubject: `${subject}.deliver` } }),
      );
      await publishAll(connected, subject, ["a"]);
      const first = (await subscription.next()).value;
      expect(first && text(first.payload)).toBe("a");
      await first?.nack({ requeue: true });
      const again = (await subscription.next()).value;
      expect(again && text(again.payload)).toBe("a");
      expect(first?.redeliveryCount).toBe(1);
      expect(again?.redeliveryCount).toBe(2);
      await again?.ack();
    });

    it("an ephemeral push consumer hands over, acks, hands a nak'd one again, and goes at close", async () => {
      const connected = await opened(server());
      const subject = uniqueName("pusheph");
      made.streams.push(subject);
      const subscription = await connected.subscribe(
        new JetStreamSubject(subject, {
          stream: subject,
          push: { declare: { deliverSubject: `${subject}.deliver`, idleHeartbeatMs: 1000 } },
          declare: { subjects: [subject], storage: "memory" },
        }),
      );
      const name = (subscription as unknown as JetStreamSubscription).consumerName;
      await publishAll(connected, subject, ["a", "b", "c"]);
      const got: string[] = [];
      const first = (await subscription.next()).value;
      expect(first && text(first.payload)).toBe("a");
      await first?.nack({ requeue: true });
      while (got.length < 3) {
        const d = (await subscription.next()).value;
        if (d === undefined) throw new Error("the subscription ended");
        got.push(`${text(d.payload)}${d.redeliveryCount}`);
        await d.ack();
      }
      // The nak'd one comes again (attempt 2), in some place among the rest.
      expect([...got].sort()).toEqual(["a2", "b1", "c1"]);
      if (where === "the real server") {
        await connected.link.settlementsWritten();
        const state = await consumerState(subject, name);
        expect(state.ackPending).toBe(0);
        expect(state.ackFloor).toBe(3);
      }
      await subscription.close();
      if (where === "the real server") {
        const nc = await rawClient();
        try {
          const jsm = await jetstreamManager(nc);
          const names: string[] = [];
          for await (const c of jsm.consumers.list(subject)) names.push(c.name);
          expect(names).not.toContain(name);
        } finally {
          await nc.close();
        }
      }
    });

    it("an ephemeral push consumer given no deliver subject pushes to an inbox of its own: two subscriptions of one subject each get every message", async () => {
      const connected = await opened(server());
      const subject = uniqueName("pushinbox");
      made.streams.push(subject);
      const source = new JetStreamSubject(subject, {
        stream: subject,
        push: { declare: { idleHeartbeatMs: 1000 } },
        declare: { subjects: [subject], storage: "memory" },
      });
      // One descriptor, two subscriptions: each creation gets its own inbox.
      const subscriptions = [await connected.subscribe(source), await connected.subscribe(source)];
      await publishAll(connected, subject, ["a", "b", "c"]);
      for (const subscription of subscriptions) {
        const got: string[] = [];
        while (got.length < 3) {
          const d = (await subscription.next()).value;
          if (d === undefined) throw new Error("the subscription ended");
          got.push(text(d.payload));
          await d.ack();
        }
        expect(got).toEqual(["a", "b", "c"]);
      }
      if (where === "the real server") {
        const nc = await rawClient();
        try {
          const jsm = await jetstreamManager(nc);
          const subjects: string[] = [];
          for (const subscription of subscriptions) {
            const name = (subscription as unknown as JetStreamSubscription).consumerName;
            const info = await jsm.consumers.info(subject, name);
            subjects.push(String(info.config.deliver_subject));
          }
          for (const deliver of subjects) expect(deliver).toMatch(/^_INBOX\./);
          expect(new Set(subjects).size).toBe(2);
        } finally {
          await nc.close();
        }
      }
    });

    for (const kind of ["durable", "ephemeral"] as const) {
      it(`a seek on a declared ${kind} push consumer makes it again at the position`, async () => {
        const connected = await opened(server());
        const subject = uniqueName(`pushseek${kind}`);
        made.streams.push(subject);
        const subscription = (await connected.subscribe(
          new JetStreamSubject(subject, {
            stream: subject,
            ...(kind === "durable" ? { durable: "pushed" } : {}),
            push: { declare: { deliverSubject: `${subject}.deliver` } },
            declare: { subjects: [subject], storage: "memory" },
          }),
        )) as unknown as JetStreamSubscription;
        await publishAll(connected, subject, ["m1", "m2", "m3", "m4"]);
        for (const expected of ["m1", "m2", "m3", "m4"]) {
          const d = (await subscription.next()).value;
          expect(d && text(d.payload)).toBe(expected);
          await d?.ack();
        }
        await subscription.seek(new JetStreamPosition(subject, 2n));
        const again: string[] = [];
        while (again.length < 3) {
          const d = (await subscription.next()).value;
          if (d === undefined) throw new Error("the subscription ended");
          again.push(text(d.payload));
          // A consumer made again: its own first delivery of each.
          expect(d.redeliveryCount).toBe(1);
          await d.ack();
        }
        expect(again).toEqual(["m2", "m3", "m4"]);
        // And on: what is published after the seek follows.
        await publishAll(connected, subject, ["m5"]);
        const next = (await subscription.next()).value;
        expect(next && text(next.payload)).toBe("m5");
        await next?.ack();
      });
    }

    it("refuses a seek on a push consumer bound with push: true, naming declare", async () => {
      const connected = await opened(server());
      const subject = uniqueName("pushbindseek");
      made.streams.push(subject);
      const declared = await connected.subscribe(
        pushSource(subject, { declare: { deliverSubject: `${subject}.deliver` } }),
      );
      await declared.close();
      const bound = (await connected.subscribe(
        new JetStreamSubject(subject, { stream: subject, durable: "pushed", push: true }),
      )) as unknown as JetStreamSubscription;
      const refused = await bound
        .seek(new JetStreamPosition(subject, 1n))
        .catch((error: RustStreamError) => error);
      expect((refused as RustStreamError).code).toBe("unsupported");
      expect(String(refused)).toMatch(
        /seek\(\) on the push consumer "pushed" .*bound with push: true.*push: \{ declare \}/,
      );
    });

    it("shares a deliver group's messages between two apps, each once", async () => {
      const connect = server();
      const [one, two] = [await opened(connect), await opened(connect)];
      const subject = uniqueName("pushgroup");
      made.streams.push(subject);
      const source = () =>
        pushSource(subject, {
          declare: { deliverSubject: `${subject}.deliver`, deliverGroup: "workers" },
        });
      const subscriptions = [await one.subscribe(source()), await two.subscribe(source())];
      const sent = Array.from({ length: 40 }, (_, i) => `m${i}`);
      const got: string[][] = [[], []];
      let total = 0;
      // Each app reads (both listening before the first publish) until the two hold every
      // message: a delivery twice would make it more.
      const reading = Promise.all(
        subscriptions.map(async (subscription, i) => {
          while (total < sent.length) {
            const next = await Promise.race([
              subscription.next(),
              eventually(() => total >= sent.length, 30_000, "every message").then(() => undefined),
            ]);
            const d = next?.value;
            if (d === undefined) return;
            got[i]?.push(text(d.payload));
            total++;
            await d.ack();
          }
        }),
      );
      await publishAll(one, subject, sent);
      await reading;
      expect([...(got[0] ?? []), ...(got[1] ?? [])].sort()).toEqual([...sent].sort());
      expect(got[0]?.length).toBeGreaterThan(0);
      expect(got[1]?.length).toBeGreaterThan(0);
    });

    it("refuses a pull consumer bound as push, and a push consumer bound as pull, naming push", async () => {
      const connected = await opened(server());
      const subject = uniqueName("pushkind");
      made.streams.push(subject);
      const pull = new JetStreamSubject(subject, {
        stream: subject,
        durable: "pulled",
        declare: { subjects: [subject], storage: "memory" },
      });
      const pullSub = await connected.subscribe(pull);
      await pullSub.close();
      const asPush = new JetStreamSubject(subject, {
        stream: subject,
        durable: "pulled",
        push: true,
      });
      await expect(connected.subscribe(asPush)).rejects.toThrow(
        /"pulled" .* is a pull consumer .*without the JetStreamSubject option push/,
      );
      const pushSub = await connected.subscribe(
        pushSource(subject, { declare: { deliverSubject: `${subject}.deliver` } }),
      );
      await pushSub.close();
      const asPull = new JetStreamSubject(subject, { stream: subject, durable: "pushed" });
      const refused = await connected.subscribe(asPull).catch((error: RustStreamError) => error);
      expect((refused as RustStreamError).code).toBe("invalid-argument");
      expect(String(refused)).toMatch(/"pushed" .* is a push consumer .*option push: true/);
      const missing = new JetStreamSubject(subject, {
        stream: subject,
        durable: "none",
        push: true,
      });
      await expect(connected.subscribe(missing)).rejects.toThrow(
        /push consumer "none" does not exist .*push: \{ declare: \{ deliverSubject \} \}/,
      );
    });
  });
}

describe("a push consumer made outside the app, on the real server", () => {
  it("is bound to with push: true; a slow handler is kept alive and called once", async () => {
    const subject = uniqueName("pushslow");
    made.streams.push(subject);
    const ackWaitMs = 1000;
    const nc = await rawClient();
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: subject, subjects: [subject], storage: "memory" as never });
      await jsm.consumers.add(subject, {
        durable_name: "pushed",
        deliver_subject: `${subject}.deliver`,
        ack_policy: AckPolicy.Explicit,
        ack_wait: ackWaitMs * 1_000_000,
        idle_heartbeat: 1_000_000_000,
        flow_control: true,
      });
    } finally {
      await nc.close();
    }
    const calls: number[] = [];
    const app = new RustStream({ name: "pushslow", version: "1.0.0" }).broker(
      liveBroker({ publish: { jetStream: true } }),
      (b) => {
        b.subscriber<{ n: number }>(
          new JetStreamSubject(subject, {
            stream: subject,
            durable: "pushed",
            push: true,
            ackWaitMs,
          }),
        ).handle(async (m) => {
          calls.push(m.n);
          if (m.n === 1) await new Promise((resolve) => setTimeout(resolve, 3 * ackWaitMs));
        });
      },
    );
    const t = await TestApp.startLive(app, { withinMs: 20_000 });
    try {
      const publisher = await rawClient();
      try {
        const { jetstream } = await import("@nats-io/jetstream");
        const js = jetstream(publisher);
        await js.publish(subject, JSON.stringify({ n: 1 }));
        await eventually(() => calls.length === 1, 5000, "the first call");
        // A sentinel behind it: once handled, a redelivery of the first would have been too.
        await js.publish(subject, JSON.stringify({ n: 2 }));
        await eventually(() => calls.includes(2), 4 * ackWaitMs + 5000, "the sentinel");
      } finally {
        await publisher.close();
      }
      expect(calls).toEqual([1, 2]);
      await eventually(
        async () => (await consumerState(subject, "pushed")).ackPending === 0,
        5000,
        "both acked",
      );
      expect((await consumerState(subject, "pushed")).redelivered).toBe(0);
    } finally {
      await t.stop();
    }
  });

  it("refuses a second binding of a push consumer without a deliver group", async () => {
    const connect = () => liveBroker().connect();
    const [one, two] = [await opened(connect), await opened(connect)];
    const subject = uniqueName("pushtaken");
    made.streams.push(subject);
    const source = () => pushSource(subject, { declare: { deliverSubject: `${subject}.deliver` } });
    const first = await one.subscribe(source());
    // The subscription listens on the deliver subject once it is first read.
    const reading = first.next();
    const nc = await rawClient();
    try {
      const jsm = await jetstreamManager(nc);
      await eventually(
        async () => (await jsm.consumers.info(subject, "pushed")).push_bound === true,
        5000,
        "the first binding",
      );
    } finally {
      await nc.close();
    }
    await expect(two.subscribe(source())).rejects.toThrow(
      /"pushed" .* is bound already .*has no deliver group/,
    );
    await first.close();
    await reading;
  });

  it("refuses an ephemeral push consumer whose deliver subject something listens to", async () => {
    const connected = await opened(() => liveBroker().connect());
    const subject = uniqueName("pushephtaken");
    made.streams.push(subject);
    const source = () =>
      new JetStreamSubject(subject, {
        stream: subject,
        push: { declare: { deliverSubject: `${subject}.deliver` } },
        declare: { subjects: [subject], storage: "memory" },
      });
    const first = await connected.subscribe(source());
    // The subscription listens on the deliver subject once it is first read.
    const reading = first.next();
    const name = (first as unknown as JetStreamSubscription).consumerName;
    const nc = await rawClient();
    try {
      const jsm = await jetstreamManager(nc);
      await eventually(
        async () => (await jsm.consumers.info(subject, name)).push_bound === true,
        5000,
        "the first binding",
      );
      await expect(connected.subscribe(source())).rejects.toThrow(
        /ephemeral push consumer .* where something listens already .*deliver subject of its own/,
      );
      // The refused one is deleted, not left for its inactive threshold.
      const names: string[] = [];
      for await (const c of jsm.consumers.list(subject)) names.push(c.name);
      expect(names).toEqual([name]);
    } finally {
      await nc.close();
    }
    await first.close();
    await reading;
  });

  it("refuses an ack wait other than the consumer's, naming ackWaitMs", async () => {
    const connected = await opened(() => liveBroker().connect());
    const subject = uniqueName("pushwait");
    made.streams.push(subject);
    const declared = await connected.subscribe(
      pushSource(
        subject,
        { declare: { deliverSubject: `${subject}.deliver` } },
        { ackWaitMs: 5000 },
      ),
    );
    await declared.close();
    await expect(
      connected.subscribe(
        new JetStreamSubject(subject, { stream: subject, durable: "pushed", push: true }),
      ),
    ).rejects.toThrow(/ack wait of 5000 ms .*give ackWaitMs: 5000/);
  });
});

describe("the push option, checked when the subject is made", () => {
  const make = (options: Record<string, unknown>) => () =>
    new JetStreamSubject("orders.created", { stream: "ORDERS", ...options });
  it("refuses push: true without durable, a durable declared without a deliver subject, a deliver group on an ephemeral, with priority, flow control without heartbeats, a wildcard", () => {
    expect(make({ push: true })).toThrow(/push: true binds .*give durable/);
    expect(make({ push: { declare: { deliverSubject: "out", deliverGroup: "workers" } } })).toThrow(
      /deliver group shares a durable push consumer's .*give durable to share/,
    );
    // An ephemeral one, declared, with a deliver subject or without (an inbox then).
    expect(make({ push: { declare: { deliverSubject: "out" } } })).not.toThrow();
    expect(make({ push: { declare: {} } })).not.toThrow();
    // A durable's is the subject the apps bound to it listen on: never made up.
    expect(make({ durable: "d", push: { declare: {} } })).toThrow(
      /durable push consumer "d" needs a deliver subject .*give push: \{ declare: \{ deliverSubject \} \}, or drop durable/,
    );
    expect(
      make({ durable: "d", push: true, priority: { policy: "overflow", group: "g" } }),
    ).toThrow(/priority groups are a pull consumer's/);
    expect(
      make({ durable: "d", push: { declare: { deliverSubject: "out", flowControl: true } } }),
    ).toThrow(/flow control only with heartbeats: give idleHeartbeatMs/);
    expect(make({ durable: "d", push: { declare: { deliverSubject: "out.*" } } })).toThrow(
      /has a wildcard/,
    );
    // The types say it too: a durable's declaration without a deliver subject, a deliver group
    // or push: true on an ephemeral, do not compile.
    const durableDeclared = { stream: "ORDERS", durable: "d", push: { declare: {} } } as const;
    // @ts-expect-error a durable push consumer's declaration names its deliver subject
    expect(() => new JetStreamSubject("o", durableDeclared)).toThrow(/needs a deliver subject/);
    const ephemeralBound = { stream: "ORDERS", push: true } as const;
    // @ts-expect-error push: true binds to a durable by its name
    expect(() => new JetStreamSubject("o", ephemeralBound)).toThrow(/give durable/);
    const ephemeralGroup = { stream: "ORDERS", push: { declare: { deliverGroup: "g" } } } as const;
    // @ts-expect-error a deliver group shares a durable's messages
    expect(() => new JetStreamSubject("o", ephemeralGroup)).toThrow(/give durable to share/);
    expect(make({ durable: "d", push: "yes" })).toThrow(/give true .*or \{ declare/);
    expect(
      make({ durable: "d", push: { declare: { deliverSubject: "out", deliverGroup: "a.b" } } }),
    ).toThrow(/not a queue group name/);
  });
});
