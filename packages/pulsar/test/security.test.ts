import { readFileSync } from "node:fs";
import { isRustStreamError } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { type ConnectedPulsarBroker, PulsarBroker, PulsarShared } from "../src/index.js";
import { signToken } from "./env.js";

// Token authentication and TLS against the test broker (tooling/brokers: a token its key signed,
// a TLS port with a CA made for it).

const open: ConnectedPulsarBroker[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.shutdown();
});

async function roundTrip(connected: ConnectedPulsarBroker): Promise<string> {
  open.push(connected);
  const topic = uniqueName("secure");
  const sub = await connected.subscribe(new PulsarShared(topic, { subscription: "s" }));
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  await publisher.publish({ name: topic, payload: bytes("hello") });
  const got = await sub.next();
  await got.value?.ack();
  return text(got.value!.payload);
}

async function failure(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("token authentication", () => {
  it("a token the broker's key signed connects, and never shows in the description", async () => {
    const token = requireEnv("PULSAR_TOKEN");
    const broker = new PulsarBroker({ url: requireEnv("PULSAR_TOKEN_URL"), token });
    expect(JSON.stringify(broker.describeServer())).not.toContain(token.slice(-12));
    const connected = await broker.connect();
    expect(JSON.stringify(connected.describeServer())).not.toContain(token.slice(-12));
    expect(await roundTrip(connected)).toBe("hello");
  });

  it("a token asked for when needed (a function) connects too", async () => {
    let asked = 0;
    const broker = new PulsarBroker({
      url: requireEnv("PULSAR_TOKEN_URL"),
      token: () => {
        asked++;
        return signToken({ sub: "ruststream" });
      },
    });
    expect(await roundTrip(await broker.connect())).toBe("hello");
    expect(asked).toBeGreaterThan(0);
  });

  it("a token another key signed is refused at connect, with a message that says so", async () => {
    const forged = `${signToken({ sub: "ruststream" }).split(".").slice(0, 2).join(".")}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`;
    const error = await failure(() =>
      new PulsarBroker({ url: requireEnv("PULSAR_TOKEN_URL"), token: forged }).connect(),
    );
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(String(error)).toMatch(/AuthenticationError.*the token was refused/);
  });
});

describe("TLS", () => {
  it("with the CA that signed the broker's certificate: a round trip over pulsar+ssl", async () => {
    const broker = new PulsarBroker({
      url: requireEnv("PULSAR_TLS_URL"),
      tls: { ca: readFileSync(requireEnv("PULSAR_TLS_CA")) },
      token: requireEnv("PULSAR_TOKEN"),
    });
    expect(broker.describeServer()).toEqual({
      protocol: "pulsar+ssl",
      host: new URL(requireEnv("PULSAR_TLS_URL").replace("pulsar+ssl", "https")).host,
    });
    const connected = await broker.connect();
    expect(connected.describeServer()).toMatchObject({
      protocol: "pulsar+ssl",
      protocolVersion: "4.0.7",
    });
    expect(await roundTrip(connected)).toBe("hello");
  });

  it("without it the certificate is not trusted, and connect says what to check", async () => {
    const error = await failure(() =>
      new PulsarBroker({ url: requireEnv("PULSAR_TLS_URL"), connectTimeoutMs: 3000 }).connect(),
    );
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(String(error)).toMatch(/certificate.*tls\.ca/);
  });

  it("nothing listening: connect fails naming the address", async () => {
    const error = await failure(() =>
      new PulsarBroker({ url: "pulsar://127.0.0.1:1", connectTimeoutMs: 2000 }).connect(),
    );
    expect(String(error)).toMatch(/cannot connect to Pulsar at pulsar:\/\/127\.0\.0\.1:1/);
  });
});
