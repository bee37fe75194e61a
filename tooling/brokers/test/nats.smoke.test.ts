import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { connect as tlsConnect } from "node:tls";
import {
  type ConnectionOptions,
  connect,
  credsAuthenticator,
  type NatsConnection,
  nkeyAuthenticator,
} from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import { requireEnv } from "../src/requireEnv.mjs";

const open: NatsConnection[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

/** A connection that never retries: a refusal surfaces as the rejection of `connect`. */
async function client(url: string, options: ConnectionOptions = {}): Promise<NatsConnection> {
  const nc = await connect({ servers: url, reconnect: false, timeout: 5000, ...options });
  open.push(nc);
  return nc;
}

/** What a refused connect is told. */
async function refusal(url: string, options: ConnectionOptions = {}): Promise<string> {
  try {
    await client(url, options);
  } catch (error) {
    return `${(error as Error).message} ${String((error as Error).cause ?? "")}`;
  }
  throw new Error("the server accepted a client it should have refused");
}

/** A binary payload and a header go out and come back on a subject of the test's own. */
async function roundTrip(nc: NatsConnection): Promise<void> {
  const subject = `smoke.${randomUUID()}`;
  const sub = nc.subscribe(subject, { max: 1 });
  const payload = new Uint8Array([0, 13, 10, 255, 1]);
  nc.publish(subject, payload);
  for await (const message of sub) expect(new Uint8Array(message.data)).toEqual(payload);
  expect(sub.getReceived()).toBe(1);
}

const json = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe("nats on loopback", () => {
  it("plain server: a round trip, and JetStream stores and acknowledges on file storage", async () => {
    const nc = await client(requireEnv("NATS_URL"));
    await roundTrip(nc);
    expect(nc.info?.version).toBe("2.15.3");
    expect(nc.info?.jetstream).toBe(true);

    // JetStream's API is requests on $JS.API subjects: a stream, then a message it acknowledges.
    const stream = `SMOKE_${randomUUID().replaceAll("-", "")}`;
    const created = (
      await nc.request(
        `$JS.API.STREAM.CREATE.${stream}`,
        json({ name: stream, subjects: [`${stream}.>`], storage: "file" }),
      )
    ).json<{ config: { storage: string }; error?: unknown }>();
    expect(created.error).toBeUndefined();
    expect(created.config.storage).toBe("file");
    const ack = (await nc.request(`${stream}.one`, json({ n: 1 }))).json<{
      stream: string;
      seq: number;
    }>();
    expect(ack).toMatchObject({ stream, seq: 1 });
    const deleted = (await nc.request(`$JS.API.STREAM.DELETE.${stream}`)).json<{
      success: boolean;
    }>();
    expect(deleted.success).toBe(true);

    const health = await fetch(`${requireEnv("NATS_MONITOR_URL")}/healthz`);
    expect(health.status).toBe(200);
  });

  it("auth server: the password and the NKey work, none or a wrong one is refused", async () => {
    const url = requireEnv("NATS_AUTH_URL");
    await roundTrip(
      await client(url, { user: requireEnv("NATS_USER"), pass: requireEnv("NATS_PASSWORD") }),
    );
    const seed = new TextEncoder().encode(requireEnv("NATS_NKEY_SEED"));
    await roundTrip(await client(url, { authenticator: nkeyAuthenticator(seed) }));
    expect(await refusal(url)).toMatch(/authorization/i);
    expect(await refusal(url, { user: requireEnv("NATS_USER"), pass: "wrong" })).toMatch(
      /authorization/i,
    );
  });

  it("token server: the token works, a wrong one is refused", async () => {
    const url = requireEnv("NATS_TOKEN_URL");
    await roundTrip(await client(url, { token: requireEnv("NATS_TOKEN") }));
    expect(await refusal(url, { token: "wrong" })).toMatch(/authorization/i);
  });

  it("TLS server: a client trusting the CA works, one without it is refused", async () => {
    const url = requireEnv("NATS_TLS_URL");
    const ca = readFileSync(requireEnv("NATS_TLS_CA"), "utf8");
    await roundTrip(await client(url, { tls: { ca } }));
    expect(await refusal(url, { tls: {} })).toMatch(/self[- ]signed|unable to (get|verify)/i);
  });

  it("JWT server: the user's credentials file works, a plain client is refused", async () => {
    const url = requireEnv("NATS_JWT_URL");
    const creds = readFileSync(requireEnv("NATS_CREDS"));
    await roundTrip(await client(url, { authenticator: credsAuthenticator(creds) }));
    expect(await refusal(url)).toMatch(/authorization/i);
  });

  it("ws server: its websocket port answers a handshake with the INFO of a JetStream server", async () => {
    // Node's own WebSocket, not the NATS client: the client keeps one transport per process.
    const socket = new WebSocket(requireEnv("NATS_WS_URL"));
    socket.binaryType = "arraybuffer";
    try {
      const first = await new Promise<string>((resolve, reject) => {
        socket.onmessage = (event) => resolve(new TextDecoder().decode(event.data as ArrayBuffer));
        socket.onerror = () => reject(new Error(`no websocket at ${requireEnv("NATS_WS_URL")}`));
      });
      expect(first).toMatch(/^INFO /);
      const info = JSON.parse(first.slice(5));
      expect(info.server_name).toMatch(/^ruststream-ws-/);
      expect(info.jetstream).toBe(true);
    } finally {
      socket.close();
    }
  });

  it("wss server: its port's certificate is the test CA's, and its websocket upgrade sends the INFO", async () => {
    // Over node:tls, which takes the CA (Node's WebSocket takes none, and this process does not
    // trust the test CA): the handshake, then the websocket upgrade by hand.
    const url = new URL(requireEnv("NATS_WSS_URL"));
    const socket = tlsConnect({
      host: url.hostname,
      port: Number(url.port),
      ca: readFileSync(requireEnv("NATS_TLS_CA")),
    });
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        let got = "";
        socket.once("error", reject);
        socket.once("secureConnect", () => {
          socket.write(
            `GET / HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
          );
        });
        // The INFO follows the 101 in the first frame, uncompressed (no extension was asked for).
        socket.on("data", (chunk: Buffer) => {
          got += chunk.toString("latin1");
          if (/"server_name":"[^"]*"/.test(got)) resolve(got);
        });
        socket.once("close", () => reject(new Error(`the wss port closed after: ${got}`)));
      });
      expect(socket.authorized).toBe(true);
      expect(answer).toMatch(/^HTTP\/1\.1 101 /);
      expect(answer).toMatch(/"server_name":"ruststream-wss-/);
    } finally {
      socket.destroy();
    }
  });
});
