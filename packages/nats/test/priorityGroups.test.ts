import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { type Logger, ManualClock, RustStream, RustStreamError } from "@ruststream/core";
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
  /** A JetStream publisher on a connection of the test's own (for `unpin`). */
  jetStream(): Promise<JetStreamPublisher>;
  /** Whether an app's logger is told of its pin's moves (the client's statuses; not the stand-in). */
  readonly tellsPins: boolean;
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
    async jetStream() {
      const connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();
      connections.push(connected);
      return (await new NatsPublish({ jetStream: true }).pair(connected)) as JetStreamPublisher;
    },
    tellsPins: true,
  };
}

function onStandIn(): Where {
  const broker = new NatsBroker({ servers: "nats://in-process.invalid:4222" });
  const clock = new ManualClock();
  let publisher: Promise<JetStreamPublisher> | undefined;
  const jetStream = () => {
    publisher ??= (async () => {
      const connected = await broker.connectInProcess({
        coordinator: new CountingCoordinator(),
        clock,
      });
      connections.push(connected);
      return (await new NatsPublish({ jetStream: true }).pair(connected)) as JetStreamPublisher;
    })();
    return publisher;
  };
  return {
    broker: () => broker,
    startApp: (app) => TestApp.start(app, { clock }),
    async publish(subject, from, to) {
      const p = await jetStream();
      for (let n = from; n <= to; n++)
        await p.publish({ name: subject, payload: bytes(JSON.stringify({ n })) });
    },
    pinnedId: undefined,
    advance: (ms) => clock.advance(ms),
    jetStream,
    tellsPins: false,
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

/** A pin's move as an app's logger heard it. */
interface PinLine {
  readonly message: string;
  readonly fields: Record<string, unknown>;
}

/** A logger keeping the app's info lines about its pin, in order. */
function pinLog(): { readonly logger: Logger; readonly lines: PinLine[] } {
  const lines: PinLine[] = [];
  const nothing = () => undefined;
  const logger: Logger = {
    debug: nothing,
    warn: nothing,
    error: nothing,
    info: (first: unknown, message?: string) => {
      if (typeof first === "object" && first !== null && "pinId" in first)
        lines.push({ message: message ?? "", fields: first as Record<string, unknown> });
    },
    child: () => logger,
  };
  return { logger, lines };
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
      readonly logger?: Logger;
    } = {},
  ): Promise<TestApp> {
    const app = new RustStream({
      name: "prio",
      version: "1.0.0",
      ...(options.logger === undefined ? {} : { logger: options.logger }),
    }).broker(where.broker(), (b) => {
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
      const firstLog = pinLog();
      const a = await start(where, subject, priority, first, { logger: firstLog.logger });
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
      if (where.tellsPins) {
        expect(firstLog.lines.map((line) => [line.message, line.fields.pinId])).toEqual([
          [expect.stringMatching(/are pinned/), pin],
          [expect.stringMatching(/gave its pin in the priority group up/), pin],
        ]);
      }
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

    it("unpin moves the pin: the other app is pinned and handles the next messages, each app's logger telling the move", async () => {
      const where = at();
      const subject = uniqueName("pinunpin");
      streams.push(subject);
      // A pin's TTL far past the test's deadlines: only the unpin moves the pin in time.
      const priority: PriorityGroup = { policy: "pinned", group: "jobs", pinTtlMs: 60_000 };
      const first: number[] = [];
      const second: number[] = [];
      const firstLog = pinLog();
      const secondLog = pinLog();
      await start(where, subject, priority, first, { logger: firstLog.logger });
      await where.publish(subject, 1, 1);
      await eventually(() => first.includes(1), 10_000, "the first app's first message");
      const pin = await where.pinnedId?.(subject, "jobs");
      const group = { broker: "nats", stream: subject, consumer: "workers", group: "jobs" };
      if (where.tellsPins) {
        expect(pin).toBeDefined();
        expect(firstLog.lines).toEqual([
          { message: expect.stringMatching(/are pinned/), fields: { ...group, pinId: pin } },
        ]);
      }
      await start(where, subject, priority, second, { logger: secondLog.logger });
      await where.publish(subject, 2, 10);
      await eventually(() => first.includes(10), 10_000, "the pinned app's sentinel");
      expect(second).toEqual([]);

      const publisher = await where.jetStream();
      const ref = { stream: subject, consumer: "workers", group: "jobs" };
      expect(await publisher.unpin(ref)).toBe(true);
      await where.publish(subject, 11, 20);
      await eventually(() => second.includes(20), 10_000, "the other app's sentinel");
      expect(second).toEqual(Array.from({ length: 10 }, (_, i) => i + 11));
      expect(first).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
      if (where.tellsPins) {
        const next = await where.pinnedId?.(subject, "jobs");
        expect(next).toBeDefined();
        expect(next).not.toBe(pin);
        expect(secondLog.lines).toEqual([
          { message: expect.stringMatching(/are pinned/), fields: { ...group, pinId: next } },
        ]);
        // The first app's pulls, carrying the old pin, are answered that it is no longer theirs.
        await eventually(
          () => firstLog.lines.length === 2,
          10_000,
          "the first app's unpinned line",
        );
        expect(firstLog.lines[1]).toEqual({
          message: expect.stringMatching(/lost their pin/),
          fields: { ...group, pinId: pin },
        });
        expect(firstLog.lines).toHaveLength(2);
      }
      // Nobody is pinned right after an unpin until a message finds a pull: a second unpin finds
      // the pin held again (the other app's), a third none.
      expect(await publisher.unpin(ref)).toBe(true);
      expect(await publisher.unpin(ref)).toBe(false);
    });

    it("unpin refuses a group, consumer or stream the server does not have, and a group that is not pinned", async () => {
      const where = at();
      const subject = uniqueName("pinrefuse");
      streams.push(subject);
      await start(where, subject, { policy: "pinned", group: "jobs" }, []);
      const publisher = await where.jetStream();
      const refusal = (ref: { stream: string; consumer: string; group: string }) =>
        publisher.unpin(ref).then(
          () => undefined,
          (error: unknown) => error,
        );
      const cases = [
        [
          { stream: subject, consumer: "workers", group: "other" },
          /has no priority group "other" \(its groups: \[jobs\]\): give the group/,
        ],
        [
          { stream: subject, consumer: "nobody", group: "jobs" },
          /has no consumer "nobody": give the durable name/,
        ],
        [
          { stream: `${subject}X`, consumer: "workers", group: "jobs" },
          /there is no JetStream stream "[\w-]+X"/,
        ],
        [{ stream: subject, consumer: "workers", group: "a.b" }, /is not a group name/],
      ] as const;
      for (const [ref, words] of cases) {
        const error = await refusal(ref);
        expect(error, JSON.stringify(ref)).toBeInstanceOf(RustStreamError);
        expect(error).toMatchObject({ code: "invalid-argument" });
        expect(String((error as Error).message)).toMatch(words);
      }
      // An overflow group has no pin: refused rather than answered as done.
      const overflow = uniqueName("ovunpin");
      streams.push(overflow);
      await start(where, overflow, { policy: "overflow", group: "spill" }, []);
      const notPinned = await refusal({ stream: overflow, consumer: "workers", group: "spill" });
      expect(notPinned).toMatchObject({ code: "invalid-argument" });
      expect(String((notPinned as Error).message)).toMatch(
        /has the priority policy "overflow", not "pinned_client"/,
      );
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
