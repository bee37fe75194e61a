import { jetstreamManager } from "@nats-io/jetstream";
import { wsconnect } from "@nats-io/transport-node";
import { isRustStreamError, RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { JetStreamSubject, NatsBroker, type NatsBrokerOptions } from "../src/index.js";
import { runChild } from "./child/runChild.js";
import { eventually } from "./env.live.js";

// Websocket servers (ws://): the tooling's ws instance serves NATS only on its websocket port
// (NATS_WS_URL), so whatever works through that URL went over the client's websocket transport.
// Its users are the auth instance's; a client giving none is the password user (no_auth_user).
// No TCP connection is opened here while a websocket one is: a process holds one kind at a time.
// wss:// (NATS_WSS_URL, the wss instance, its certificate signed by the test CA NATS_TLS_CA) runs in
// child processes: Node reads NODE_EXTRA_CA_CERTS once, when a process starts.

let t: TestApp | undefined;
const streams: string[] = [];
afterEach(async () => {
  await t?.stop();
  t = undefined;
  if (streams.length === 0) return;
  const nc = await wsconnect({ servers: requireEnv("NATS_WS_URL"), reconnect: false });
  try {
    const jsm = await jetstreamManager(nc);
    for (const stream of streams.splice(0)) await jsm.streams.delete(stream);
  } finally {
    await nc.close();
  }
});

async function refusedWith(
  options: NatsBrokerOptions,
  code: "invalid-argument" | "broker-failure",
) {
  try {
    const connected = await new NatsBroker(options).connect();
    await connected.shutdown();
  } catch (error) {
    expect(isRustStreamError(error, code), String(error)).toBe(true);
    return String(error);
  }
  throw new Error("the broker connected where it should have refused");
}

describe("websocket servers", () => {
  it("an app over ws://: a core subscription and a JetStream consumer, its reply stored and read", async () => {
    const stream = uniqueName("WS");
    streams.push(stream);
    const core = uniqueName("ws.core");
    const pings: string[] = [];
    const billed: number[] = [];
    const declare = { subjects: [`${stream}.>`], storage: "memory" } as const;
    const app = new RustStream({ name: "ws-billing", version: "1.0.0" }).broker(
      new NatsBroker({ servers: requireEnv("NATS_WS_URL") }),
      (b) => {
        b.subscriber<string>(core).handle(async (ping) => {
          pings.push(ping);
        });
        b.subscriber<{ id: number }>(new JetStreamSubject(`${stream}.orders`, { stream, declare }))
          .publishes({ billed: `${stream}.billed` })
          .handle(async (order, ctx) => {
            await ctx.out.billed.publish({ id: order.id });
          });
        b.subscriber<{ id: number }>(
          new JetStreamSubject(`${stream}.billed`, { stream, declare }),
        ).handle(async (bill) => {
          billed.push(bill.id);
        });
      },
    );
    t = await TestApp.startLive(app, { withinMs: 20_000 });
    await t.running.publish(core, "ping");
    await t.running.publish(`${stream}.orders`, { id: 7 });
    await eventually(() => pings.length === 1 && billed.length === 1, 10_000, "ping and bill");
    expect(pings).toEqual(["ping"]);
    expect(billed).toEqual([7]);
  });

  it("credentials over ws://: the password user and the NKey user; a wrong password refused", async () => {
    const servers = requireEnv("NATS_WS_URL");
    for (const credentials of [
      { user: requireEnv("NATS_USER"), password: requireEnv("NATS_PASSWORD") },
      { nkeySeed: requireEnv("NATS_NKEY_SEED") },
    ]) {
      const connected = await new NatsBroker({ servers, credentials }).connect();
      try {
        const subject = uniqueName("ws.creds");
        const subscription = await connected.subscribe(subject);
        await (await connected.defaultPublishPolicy().pair(connected)).publish({
          name: subject,
          payload: bytes("hi"),
        });
        const got = (await subscription.next()).value;
        expect(got && text(got.payload)).toBe("hi");
      } finally {
        await connected.shutdown();
      }
    }
    const wrong = { user: requireEnv("NATS_USER"), password: "wrong" };
    expect(
      await refusedWith({ servers, credentials: wrong, maxReconnectAttempts: 0 }, "broker-failure"),
    ).toMatch(/authorization/i);
  });

  it("no websocket listener on a ws:// port: a broker failure saying the websocket did not open", async () => {
    // The plain server's TCP port: a NATS server, but no websocket handshake there.
    const servers = requireEnv("NATS_URL").replace(/^nats:/, "ws:");
    expect(await refusedWith({ servers, maxReconnectAttempts: 0 }, "broker-failure")).toMatch(
      /websocket did not open/,
    );
  });

  it("a TCP connection beside an open websocket one is refused, and opens once it closed", async () => {
    const ws = await new NatsBroker({ servers: requireEnv("NATS_WS_URL") }).connect();
    let closed = false;
    try {
      expect(await refusedWith({ servers: requireEnv("NATS_URL") }, "invalid-argument")).toMatch(
        /1 NATS connection\(s\) over websocket open/,
      );
    } finally {
      await ws.shutdown();
      closed = true;
    }
    expect(closed).toBe(true);
    const tcp = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();
    await tcp.shutdown();
  });

  it("an app over wss:// in a process trusting the test CA through NODE_EXTRA_CA_CERTS: a round trip", async () => {
    const prefix = uniqueName("wss");
    const { code, out } = await runChild("wssApp.ts", prefix, {
      ...process.env,
      NODE_EXTRA_CA_CERTS: requireEnv("NATS_TLS_CA"),
    });
    expect(out).toContain("round trip: ping, answered");
    expect(code, out).toBe(0);
  });

  it("wss:// in a process without the test CA: a broker failure naming NODE_EXTRA_CA_CERTS", async () => {
    const env = { ...process.env };
    delete env.NODE_EXTRA_CA_CERTS;
    const { code, out } = await runChild("wssApp.ts", uniqueName("wss"), env);
    expect(out).toMatch(
      /refused: broker-failure: .*could not connect to NATS at wss:\/\/.*the websocket did not open .*TLS refused.*NODE_EXTRA_CA_CERTS/,
    );
    expect(code, out).toBe(2);
  });

  it("refuses, before any I/O, a list mixing websocket and TCP servers and TLS settings it cannot honour", () => {
    const refused = (options: NatsBrokerOptions) => {
      try {
        new NatsBroker(options);
      } catch (error) {
        expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
        return String(error);
      }
      throw new Error(`accepted ${JSON.stringify(options)}`);
    };
    expect(refused({ servers: ["ws://127.0.0.1:1", "nats://127.0.0.1:2"] })).toMatch(
      /mix websocket and TCP servers.*give only ws:\/\/ and wss:\/\/ servers, or only nats:\/\/ and tls:\/\/ ones/,
    );
    expect(refused({ servers: ["wss://127.0.0.1:1", "tls://127.0.0.1:2"] })).toMatch(/mix/);
    expect(refused({ servers: "wss://127.0.0.1:1", tls: { ca: "x" } })).toMatch(
      /websocket servers take no TLS settings.*NODE_EXTRA_CA_CERTS.*tls:\/\//,
    );
    expect(refused({ servers: "ws://127.0.0.1:1", tls: true })).toMatch(/give wss:\/\/host:port/);
    expect(refused({ servers: "wss://127.0.0.1:1", tls: false })).toMatch(/give ws:\/\/host:port/);
    expect(refused({ servers: "http://127.0.0.1:1" })).toMatch(/not a NATS scheme/);
    // What the websocket transport can do is taken.
    new NatsBroker({ servers: ["wss://127.0.0.1:1", "ws://127.0.0.1:2"] });
    new NatsBroker({ servers: "wss://127.0.0.1:1", tls: true });
  });
});
