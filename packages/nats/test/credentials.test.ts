import { readFileSync } from "node:fs";
import { isRustStreamError } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { NatsBroker, type NatsBrokerOptions } from "../src/index.js";

// Each way NATS takes credentials, against a server that demands it: a round trip through the
// broker, and a refusal for a wrong one, said as a broker failure with the server's reason.

async function roundTrip(options: NatsBrokerOptions): Promise<void> {
  const connected = await new NatsBroker(options).connect();
  try {
    const subject = uniqueName("creds");
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

async function refused(options: NatsBrokerOptions): Promise<string> {
  try {
    const connected = await new NatsBroker(options).connect();
    await connected.shutdown();
  } catch (error) {
    expect(isRustStreamError(error, "broker-failure"), String(error)).toBe(true);
    return String(error);
  }
  throw new Error("the server accepted a client it should have refused");
}

describe("credentials", () => {
  it("user and password", async () => {
    const servers = requireEnv("NATS_AUTH_URL");
    await roundTrip({
      servers,
      credentials: { user: requireEnv("NATS_USER"), password: requireEnv("NATS_PASSWORD") },
    });
    expect(
      await refused({ servers, credentials: { user: requireEnv("NATS_USER"), password: "wrong" } }),
    ).toMatch(/authorization/i);
    expect(await refused({ servers })).toMatch(/authorization/i);
  });

  it("an NKey seed", async () => {
    await roundTrip({
      servers: requireEnv("NATS_AUTH_URL"),
      credentials: { nkeySeed: requireEnv("NATS_NKEY_SEED") },
    });
  });

  it("a token", async () => {
    const servers = requireEnv("NATS_TOKEN_URL");
    await roundTrip({ servers, credentials: { token: requireEnv("NATS_TOKEN") } });
    expect(await refused({ servers, credentials: { token: "wrong" } })).toMatch(/authorization/i);
  });

  it("a JWT credentials file's text (operator mode)", async () => {
    const servers = requireEnv("NATS_JWT_URL");
    await roundTrip({
      servers,
      credentials: { creds: readFileSync(requireEnv("NATS_CREDS"), "utf8") },
    });
    expect(await refused({ servers })).toMatch(/authorization/i);
  });

  it("TLS: trusting the server's CA works, the system's CAs alone are refused", async () => {
    const servers = requireEnv("NATS_TLS_URL");
    await roundTrip({ servers, tls: { ca: readFileSync(requireEnv("NATS_TLS_CA"), "utf8") } });
    expect(await refused({ servers, tls: true })).toMatch(
      /self[- ]signed|unable to (get|verify)|certificate/i,
    );
  });

  it("a credential in the server's URL is refused before connecting, so nothing shows it", () => {
    expect(() => new NatsBroker({ servers: "nats://me:secret@127.0.0.1:4222" })).toThrow(
      /credentials, not in the server's URL/,
    );
    expect(
      () => new NatsBroker({ servers: "nats://127.0.0.1:4222", credentials: { token: "" } }),
    ).toThrow(/one of/);
  });
});
