import { isRustStreamError, ManualClock, RustStream } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { TestApp } from "@ruststream/testing";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  NatsBroker,
  NatsPublish,
  type NatsPublisher,
} from "../src/index.js";
import { rawClient } from "./env.live.js";

// Request/reply over core NATS: a handler's reply, a plain NATS responder's, and "no responders"
// answered by the server at once rather than after the timeout.

const connections: ConnectedNatsBroker[] = [];
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await Promise.all(connections.splice(0).map((c) => c.shutdown()));
});

const live = () => new NatsBroker({ servers: requireEnv("NATS_URL") });

async function requester(connect: () => Promise<ConnectedNatsBroker>): Promise<NatsPublisher> {
  const connected = await connect();
  connections.push(connected);
  return (await new NatsPublish().pair(connected)) as NatsPublisher;
}

async function noResponders(publisher: NatsPublisher) {
  const started = performance.now();
  let error: unknown;
  try {
    await publisher.request(
      { name: uniqueName("nobody"), payload: bytes("?") },
      { timeoutMs: 10_000 },
    );
  } catch (e) {
    error = e;
  }
  return { error, ms: performance.now() - started };
}

describe("no responders", () => {
  it("on the real server: its own error at once, not the timeout", async () => {
    const { error, ms } = await noResponders(await requester(() => live().connect()));
    expect(isRustStreamError(error, "broker-failure"), String(error)).toBe(true);
    expect(String(error)).toMatch(/no responders/);
    expect(ms).toBeLessThan(2000);
  });

  it("in-process: the same", async () => {
    const broker = new NatsBroker({ servers: "nats://in-process.invalid:4222" });
    const { error, ms } = await noResponders(
      await requester(() =>
        broker.connectInProcess({
          coordinator: new CountingCoordinator(),
          clock: new ManualClock(),
        }),
      ),
    );
    expect(isRustStreamError(error, "broker-failure"), String(error)).toBe(true);
    expect(String(error)).toMatch(/no responders/);
    expect(ms).toBeLessThan(2000);
  });
});

describe("replies", () => {
  it("a handler of an app replies to a request", async () => {
    const subject = uniqueName("ask");
    const app = new RustStream({ name: "answers", version: "1.0.0" }).broker(live(), (b) => {
      b.subscriber<{ q: string }>(subject)
        .reply()
        .handle((m) => ({ a: m.q.toUpperCase() }));
    });
    t = await TestApp.startLive(app);
    const publisher = await requester(() => live().connect());
    const reply = await publisher.request(
      { name: subject, payload: bytes(JSON.stringify({ q: "hi" })) },
      { timeoutMs: 5000 },
    );
    expect(JSON.parse(text(reply.payload))).toEqual({ a: "HI" });
  });

  it("a plain NATS responder (msg.respond) answers on the native reply subject", async () => {
    const subject = uniqueName("plain");
    const nc = await rawClient();
    try {
      nc.subscribe(subject, {
        callback: (_e, m) => {
          m.respond(`re:${m.string()}`);
        },
      });
      await nc.flush();
      const publisher = await requester(() => live().connect());
      const reply = await publisher.request(
        { name: subject, payload: bytes("x") },
        { timeoutMs: 5000 },
      );
      expect(text(reply.payload)).toBe("re:x");
    } finally {
      await nc.close();
    }
  });

  it("a request from a plain NATS client reaches a handler, whose reply it reads", async () => {
    const subject = uniqueName("from-plain");
    const app = new RustStream({ name: "answers", version: "1.0.0" }).broker(live(), (b) => {
      b.subscriber<{ q: number }>(subject)
        .reply()
        .handle((m) => ({ a: m.q + 1 }));
    });
    t = await TestApp.startLive(app);
    const nc = await rawClient();
    try {
      const reply = await nc.request(subject, JSON.stringify({ q: 41 }), { timeout: 5000 });
      expect(reply.json()).toEqual({ a: 42 });
    } finally {
      await nc.close();
    }
  });
});
