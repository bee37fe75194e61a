import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { ManualClock, RustStream, RustStreamError } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { TestApp } from "@ruststream/testing";
import { bytes, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import {
  type ConnectedNatsBroker,
  type JetStreamPublisher,
  JetStreamSubject,
  NatsBroker,
  NatsPublish,
  type PriorityGroup,
} from "../src/index.js";
import { deleteStreams, eventually, rawClient } from "./env.live.js";

// Priority groups: two apps on one durable consumer, the server (or the in-process stand-in)
// choosing between their pulls. Each phase ends on a sentinel the apps handle, or on the server's
// own word (its pinned client), never on a quiet wait. The stand-in runs on a ManualClock the test
// moves where the server's time passes by itself (a pin's TTL).

const apps: TestApp[] = [];
const streams: string[] = [];
const connections: ConnectedNatsBroker[] = [];
afterEach(async () => {
  for (const t of apps.splice(0)) await t.stop();
  await Promise.all(connections.splice(0).map((c) => c.shutdown()));
  await deleteStreams(...streams.splice(0));
});

interface Handled {
  readonly n: number;
}

/** Where a test runs: how its apps start, how it publishes, and what it can read of the pin. */
interface Where {
  /** A broker for the next app (the stand-in's apps share one, as they share its server). */
  broker(): NatsBroker;
  startApp(app: RustStream): Promise<TestApp>;
  publish(subject: string, from: number, to: number): Promise<void>;
  /** The client pinned in `group` (the server's consumer info); the stand-in shows none. */
  readonly pinnedId: ((stream: string, group: string) => Promise<string | undefined>) | undefined;
  /** Lets the server's time pass: the stand-in's clock moved, the server's waited for. */
  advance(ms: number): void;
}

function onServer(): Where {
  return {
    broker: () => new NatsBroker({ servers: requireEnv("NATS_URL") }),
    startApp: (app) => TestApp.startLive(app, { withinMs: 20_000 }),
    async publish(subject, from, to) {
      const nc = await rawClient();
      try {
        const js = jetstream(nc);
        for (let n = from; n <= to; n++) await js.publish(subject, JSON.stringify({ n }));
      } finally {
        await nc.close();
      }
    },
    pinnedId,
    advance: () => undefined,
  };
}

function onStandIn(): Where {
  const broker = new NatsBroker({ servers: "nats://in-process.invalid:4222" });
  const clock = new ManualClock();
  let publisher: Promise<JetStreamPublisher> | undefined;
  return {
    broker: () => broker,
    startApp: (app) => TestApp.start(app, { clock }),
    async publish(subject, from, to) {
      publisher ??= (async () => {
        const connected = await broker.connectInProcess({
          coordinator: new CountingCoordinator(),
          clock,
        });
        connections.push(connected);
        return (await new NatsPublish({ jetStream: true }).pair(connected)) as JetStreamPublisher;
      })();
      const p = await publisher;
      for (let n = from; n <= to; n++)
        await p.publish({ name: subject, payload: bytes(JSON.stringify({ n })) });
    },
    pinnedId: undefined,
    advance: (ms) => clock.advance(ms),
  };
}

/** The client the server has pinned in `group` of the consumer, or undefined. */
async function pinnedId(stream: string, group: string): Promise<string | undefined> {
  const nc = await rawClient();
  try {
    const info = await (await jetstreamManager(nc)).consumers.info(stream, "workers");
    const groups = (info as { priority_groups?: { group: string; pinned_client_id?: string }[] })
      .priority_groups;
    return groups?.find((g) => g.group === group)?.pinned_client_id || undefined;
  } finally {
    await nc.close();
  }
}

const targets: [string, () => Where][] = [
  ["the real server", onServer],
  ["the stand-in", onStandIn],
];

for (const [name, at] of targets) {
  /** An app on the durable with `priority`, recording what it handles in `into`. */
  async function start(
    where: Where,
    subject: string,
    priority: PriorityGroup,
    into: number[],
    options: {
      readonly gate?: () => Promise<void>;
      readonly fetchSize?: number;
      readonly pullExpiresMs?: number;
    } = {},
  ): Promise<TestApp> {
    const app = new RustStream({ name: "prio", version: "1.0.0" }).broker(where.broker(), (b) => {
      b.subscriber<Handled>(
        new JetStreamSubject(subject, {
          stream: subject,
          durable: "workers",
          priority,
          ...(options.fetchSize === undefined ? {} : { fetchSize: options.fetchSize }),
          ...(options.pullExpiresMs === undefined ? {} : { pullExpiresMs: options.pullExpiresMs }),
          declare: { subjects: [subject], storage: "memory" },
        }),
      ).handle(async (m) => {
        into.push(m.n);
        await options.gate?.();
      });
    });
    const t = await where.startApp(app);
    apps.push(t);
    return t;
  }

  describe(`a pinned priority group, on ${name}`, () => {
    it("hands every message to the pinned app while it lives, then to the other once it stopped", async () => {
      const where = at();
      const subject = uniqueName("pinned");
      streams.push(subject);
      // A pin's TTL far past the test's deadlines: only the stopping app's unpin hands over in time.
      const priority: PriorityGroup = { policy: "pinned", group: "jobs", pinTtlMs: 60_000 };
      const first: number[] = [];
      const second: number[] = [];
      const a = await start(where, subject, priority, first);
      await where.publish(subject, 1, 1);
      await eventually(() => first.includes(1), 10_000, "the first app's first message");
      const pin = await where.pinnedId?.(subject, "jobs");
      if (where.pinnedId !== undefined) expect(pin).toBeDefined();

      await start(where, subject, priority, second);
      // Messages 2 to 20 and the sentinel 21, with both apps pulling: the pinned one takes all.
      await where.publish(subject, 2, 21);
      await eventually(() => first.includes(21), 10_000, "the pinned app's sentinel");
      expect(first).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
      expect(second).toEqual([]);
      if (where.pinnedId !== undefined) expect(await where.pinnedId(subject, "jobs")).toBe(pin);

      // The pinned app stops, giving its pin up: the server pins the other's pulls at once.
      await a.stop();
      apps.splice(apps.indexOf(a), 1);
      if (where.pinnedId !== undefined) expect(await where.pinnedId(subject, "jobs")).not.toBe(pin);
      await where.publish(subject, 22, 30);
      await eventually(() => second.includes(30), 20_000, "the other app's sentinel");
      expect(second).toEqual(Array.from({ length: 9 }, (_, i) => i + 22));
      expect(first).toHaveLength(21);
      if (where.pinnedId !== undefined) {
        const next = await where.pinnedId(subject, "jobs");
        expect(next).toBeDefined();
        expect(next).not.toBe(pin);
      }
    });

    it("moves the pin to the other app once the pinned one stops pulling for pinTtlMs", async () => {
      const where = at();
      const subject = uniqueName("pinstall");
      streams.push(subject);
      const priority: PriorityGroup = { policy: "pinned", group: "jobs", pinTtlMs: 2000 };
      const first: number[] = [];
      const second: number[] = [];
      let release: () => void = () => undefined;
      const stuck = new Promise<void>((resolve) => {
        release = resolve;
      });
      onTestFinished(() => release());
      // One message at a time, its handler stuck: the pinned app has no room and pulls no more.
      await start(where, subject, priority, first, { gate: () => stuck, fetchSize: 1 });
      await where.publish(subject, 1, 1);
      await eventually(() => first.includes(1), 10_000, "the first app's first message");
      const pin = await where.pinnedId?.(subject, "jobs");
      if (where.pinnedId !== undefined) expect(pin).toBeDefined();
      await start(where, subject, priority, second);
      await where.publish(subject, 2, 10);
      // The stuck app's pin TTL, on the stand-in's clock (the server's passes by itself).
      where.advance(2000);
      await eventually(() => second.includes(10), 20_000, "the other app's sentinel");
      if (where.pinnedId !== undefined) {
        const next = await where.pinnedId(subject, "jobs");
        expect(next).toBeDefined();
        expect(next).not.toBe(pin);
      }
      // The stuck app had one pull of 1 out (asked ahead) when it stopped: at most message 2 went
      // to it, to wait in its subscription; everything after it went to the other, in order.
      expect(first).toEqual([1]);
      const from = second[0] ?? 0;
      expect(from === 2 || from === 3).toBe(true);
      expect(second).toEqual(Array.from({ length: 11 - from }, (_, i) => i + from));
      release();
      await eventually(() => first.length + second.length === 10, 10_000, "every message handled");
      expect([...first, ...second].sort((x, y) => x - y)).toEqual(
        Array.from({ length: 10 }, (_, i) => i + 1),
      );
    });

    it("binds an app with the same group, refuses one whose group differs, naming the difference", async () => {
      const where = at();
      const subject = uniqueName("pinmismatch");
      streams.push(subject);
      await start(where, subject, { policy: "pinned", group: "jobs" }, []);
      // The same group again (the server's default pin TTL on both) binds to it.
      await start(where, subject, { policy: "pinned", group: "jobs" }, []);
      const refused = await start(
        where,
        subject,
        { policy: "overflow", group: "spill", minPending: 5 },
        [],
      ).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(RustStreamError);
      expect(refused).toMatchObject({ code: "invalid-argument" });
      expect(String((refused as Error).message)).toMatch(
        /priority_policy is "pinned_client", this app asks "overflow"; priority_groups is \[jobs\], this app asks \[spill\]/,
      );
    });
  });

  describe(`an overflow priority group, on ${name}`, () => {
    it("serves the standby only while the consumer's backlog is past its minPending", async () => {
      const where = at();
      const subject = uniqueName("overflow");
      streams.push(subject);
      const priority: PriorityGroup = { policy: "overflow", group: "jobs" };
      const primary: number[] = [];
      const standby: number[] = [];
      let open = true;
      let release: () => void = () => undefined;
      let held = Promise.resolve();
      const gate = () => (open ? Promise.resolve() : held);
      await start(where, subject, priority, primary, { gate, fetchSize: 2 });
      await start(where, subject, { ...priority, minPending: 5 }, standby);

      // A backlog of at most 4: the primary handles all of it, the sentinel 4 last.
      await where.publish(subject, 1, 4);
      await eventually(() => primary.includes(4), 10_000, "the primary's sentinel");
      expect(primary).toEqual([1, 2, 3, 4]);
      expect(standby).toEqual([]);

      // The primary stuck on its handlers, 30 more: the backlog passes 5 and the standby is served.
      open = false;
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await where.publish(subject, 5, 34);
      await eventually(() => standby.length > 0, 10_000, "the standby's first message");
      open = true;
      release();
      await eventually(
        () => primary.length + standby.length === 34,
        20_000,
        "every message handled once",
      );
      expect([...primary, ...standby].sort((x, y) => x - y)).toEqual(
        Array.from({ length: 34 }, (_, i) => i + 1),
      );
      // Served only while more than 5 waited undelivered: at most 25 of the 30.
      expect(standby.length).toBeLessThanOrEqual(25);
      expect(standby.every((n) => n > 4)).toBe(true);
    });
  });

  describe(`a prioritized priority group, on ${name}`, () => {
    it("serves the priority 1 app only while the priority 0 app has no pull waiting", async () => {
      const where = at();
      const subject = uniqueName("prioritized");
      streams.push(subject);
      const first: number[] = [];
      const second: number[] = [];
      let open = true;
      let release: () => void = () => undefined;
      let held = Promise.resolve();
      onTestFinished(() => release());
      const gate = () => (open ? Promise.resolve() : held);
      // Pulls that wait at the server 30 s: the priority 0 app always has one out while it has room.
      const pulls = { fetchSize: 4, pullExpiresMs: 30_000 };
      await start(where, subject, { policy: "prioritized", group: "jobs", priority: 0 }, first, {
        gate,
        ...pulls,
      });
      await start(
        where,
        subject,
        { policy: "prioritized", group: "jobs", priority: 1 },
        second,
        pulls,
      );

      // Both pulling: every message goes to the priority 0 app, the sentinel 3 last.
      await where.publish(subject, 1, 3);
      await eventually(() => first.includes(3), 10_000, "the priority 0 app's sentinel");
      expect(first).toEqual([1, 2, 3]);
      expect(second).toEqual([]);

      // Its handlers stuck, it fills up and pulls no more: the priority 1 app is served, to the end.
      open = false;
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await where.publish(subject, 4, 30);
      await eventually(() => second.includes(30), 20_000, "the priority 1 app's sentinel");
      expect(second.every((n) => n > 3)).toBe(true);
      open = true;
      release();
      await eventually(() => first.length + second.length === 30, 10_000, "every message handled");
      expect([...first, ...second].sort((x, y) => x - y)).toEqual(
        Array.from({ length: 30 }, (_, i) => i + 1),
      );
    });
  });
}

describe("priority options", () => {
  it("refuses a group without a durable, a bad group name, a threshold of 0, a level of 10", () => {
    const base = { stream: "S" };
    expect(
      () => new JetStreamSubject("s", { ...base, priority: { policy: "pinned", group: "g" } }),
    ).toThrow(/give the consumer a name \(durable\)/);
    expect(
      () =>
        new JetStreamSubject("s", {
          ...base,
          durable: "d",
          priority: { policy: "pinned", group: "a.b" },
        }),
    ).toThrow(/not a priority group name/);
    expect(
      () =>
        new JetStreamSubject("s", {
          ...base,
          durable: "d",
          priority: { policy: "overflow", group: "g", minPending: 0 },
        }),
    ).toThrow(/minPending: 0 is not a count of messages/);
    expect(
      () =>
        new JetStreamSubject("s", {
          ...base,
          durable: "d",
          priority: { policy: "prioritized", group: "g", priority: 10 },
        }),
    ).toThrow(/priority: 10 is not a priority level: a whole number from 0 \(served first\) to 9/);
  });
});
