// Lookups, keep-alive, authentication, the negotiated size limit and TLS, against scripted brokers.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isRustStreamError } from "@ruststream/core";
import {
  bytes,
  ensureTestCertificates,
  requireEnv,
  text,
  uniqueName,
} from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { CommandType, LookupType, ServerError } from "../src/wire/commands/enums.js";
import { encodeCommandFrame } from "../src/wire/frame.js";
import { PulsarClient, type PulsarServerError } from "../src/wire/index.js";
import { eventually, serviceUrl } from "./env.js";
import { type ScriptedBroker, scriptedBroker } from "./scriptedBroker.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function broker(...args: Parameters<typeof scriptedBroker>): Promise<ScriptedBroker> {
  const b = await scriptedBroker(...args);
  cleanups.push(() => b.close());
  return b;
}

function client(options: ConstructorParameters<typeof PulsarClient>[0]): PulsarClient {
  const c = new PulsarClient(options);
  cleanups.push(() => c.close());
  return c;
}

describe("lookup redirects", () => {
  it("follow Redirect answers, passing the authoritative flag on, to the real broker", async () => {
    const realUrl = serviceUrl();
    const second = await broker((command, connection) => {
      if (command.type !== CommandType.LOOKUP) return false;
      connection.reply({
        type: CommandType.LOOKUP_RESPONSE,
        lookupTopicResponse: {
          requestId: command.lookupTopic!.requestId,
          response: LookupType.Redirect,
          brokerServiceUrl: realUrl,
          authoritative: false,
        },
      });
      return true;
    });
    const first = await broker((command, connection) => {
      if (command.type !== CommandType.LOOKUP) return false;
      connection.reply({
        type: CommandType.LOOKUP_RESPONSE,
        lookupTopicResponse: {
          requestId: command.lookupTopic!.requestId,
          response: LookupType.Redirect,
          brokerServiceUrl: second.url,
          authoritative: true,
        },
      });
      return true;
    });
    const c = client({ serviceUrl: first.url });
    const topic = uniqueName("redirected");
    const producer = await c.createProducer({ topic, batching: false });
    await producer.send({ payload: bytes("via two redirects") });

    const firstLookup = first.connections[0]!.received.find((x) => x.type === CommandType.LOOKUP)!;
    const secondLookup = second.connections[0]!.received.find(
      (x) => x.type === CommandType.LOOKUP,
    )!;
    expect(firstLookup.lookupTopic!.authoritative).toBe(false);
    expect(firstLookup.lookupTopic!.topic).toBe(`persistent://public/default/${topic}`);
    expect(secondLookup.lookupTopic!.authoritative).toBe(true);

    const reader = client({ serviceUrl: realUrl });
    const consumer = await reader.subscribe({
      topic,
      subscription: "s",
      initialPosition: "earliest",
    });
    expect(text((await consumer.receive({ timeoutMs: 5000 })).payload)).toBe("via two redirects");
  });

  it("stop after the redirect limit when brokers keep pointing elsewhere", async () => {
    let lookups = 0;
    const loop: ScriptedBroker = await broker((command, connection) => {
      if (command.type !== CommandType.LOOKUP) return false;
      lookups++;
      connection.reply({
        type: CommandType.LOOKUP_RESPONSE,
        lookupTopicResponse: {
          requestId: command.lookupTopic!.requestId,
          response: LookupType.Redirect,
          brokerServiceUrl: loop.url,
        },
      });
      return true;
    });
    const c = client({ serviceUrl: loop.url, maxLookupRedirects: 3 });
    const error = await c.createProducer({ topic: "looping" }).catch((e: unknown) => e);
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect((error as Error).message).toMatch(/more than 3 redirects/);
    expect(lookups).toBe(4);
  });

  it("a Failed lookup rejects with the server's error as the cause", async () => {
    const failing = await broker((command, connection) => {
      if (command.type !== CommandType.LOOKUP) return false;
      connection.reply({
        type: CommandType.LOOKUP_RESPONSE,
        lookupTopicResponse: {
          requestId: command.lookupTopic!.requestId,
          response: LookupType.Failed,
          error: ServerError.TopicNotFound,
          message: "no such topic",
        },
      });
      return true;
    });
    const error = await client({ serviceUrl: failing.url })
      .createProducer({ topic: "missing" })
      .catch((e: unknown) => e);
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(((error as Error).cause as PulsarServerError).serverError).toBe("TopicNotFound");
  });
});

describe("keep-alive", () => {
  it("answers the broker's PING with PONG", async () => {
    const b = await broker((command, connection) => {
      if (command.type === CommandType.CONNECT) {
        connection.reply({
          type: CommandType.CONNECTED,
          connected: { serverVersion: "s", protocolVersion: 20 },
        });
        connection.reply({ type: CommandType.PING, ping: {} });
        return true;
      }
      return false;
    });
    await client({ serviceUrl: b.url }).createProducer({ topic: "pinged" });
    await eventually(
      () => b.connections[0]!.received.some((x) => x.type === CommandType.PONG),
      5000,
      "PONG",
    );
  });

  it("takes a silent peer for dead, reconnects, and resends the pending send on the new connection", async () => {
    const b = await broker((command, connection) => {
      // The first connection goes silent once the producer exists: no PONG, no receipt.
      if (
        connection.index === 0 &&
        (command.type === CommandType.PING || command.type === CommandType.SEND)
      )
        return true;
      return false;
    });
    const c = client({
      serviceUrl: b.url,
      keepAliveIntervalMs: 100,
      backoff: { initialMs: 20, maxMs: 100 },
    });
    const producer = await c.createProducer({ topic: "silent", batching: false });
    const started = Date.now();
    const id = await producer.send({ payload: bytes("survives") });
    const took = Date.now() - started;
    expect(id.entryId).toBe(0n);
    expect(b.connections.length).toBeGreaterThanOrEqual(2);
    expect(b.connections[0]!.closed).toBe(true);
    // Detected after two silent intervals, not at once and not after the 30 s default.
    expect(took).toBeGreaterThanOrEqual(150);
    expect(took).toBeLessThan(5000);
    const resent = b.connections[1]!.received.filter((x) => x.type === CommandType.SEND);
    expect(resent.map((x) => x.send!.sequenceId)).toEqual([0n]);
    expect(b.connections[1]!.messages.map(text)).toEqual(["survives"]);
    const lost = b.connections[0]!.received.filter((x) => x.type === CommandType.SEND);
    expect(lost.map((x) => x.send!.sequenceId)).toEqual([0n]);
    expect(b.connections[0]!.messages.map(text)).toEqual(["survives"]);
  });
});

describe("a close that follows an attach at once", () => {
  it("a CLOSE_PRODUCER read with the PRODUCER_SUCCESS it follows makes the producer attach again", async () => {
    let producers = 0;
    const b = await broker((command, connection) => {
      if (command.type !== CommandType.PRODUCER) return false;
      producers++;
      const success = encodeCommandFrame({
        type: CommandType.PRODUCER_SUCCESS,
        producerSuccess: { requestId: command.producer!.requestId, producerName: "p" },
      });
      if (producers === 1) {
        connection.reply({
          type: CommandType.PRODUCER_SUCCESS,
          producerSuccess: { requestId: command.producer!.requestId, producerName: "p" },
        });
        return true;
      }
      if (producers === 2) {
        // A topic unloaded again at once: the close arrives in the same read as the success.
        const close = encodeCommandFrame({
          type: CommandType.CLOSE_PRODUCER,
          closeProducer: { producerId: command.producer!.producerId, requestId: 0 },
        });
        connection.socket.write(Buffer.concat([success, close]));
        return true;
      }
      connection.socket.write(success);
      return true;
    });
    const c = client({ serviceUrl: b.url, backoff: { initialMs: 10, maxMs: 20 } });
    const producer = await c.createProducer({ topic: "closed-at-once", batching: false });
    // The first unload.
    b.connections[0]!.reply({
      type: CommandType.CLOSE_PRODUCER,
      closeProducer: { producerId: 0, requestId: 0 },
    });
    await eventually(() => producers >= 2, 5000, "the second PRODUCER");
    const id = await producer.send({ payload: bytes("after") });
    expect(id.entryId).toBe(0n);
    expect(b.connections.flatMap((c) => c.messages).map(text)).toEqual(["after"]);
    // Attached a third time: the second producer was closed as it was made.
    expect(producers).toBe(3);
  });
});

describe("authentication", () => {
  it("sends the token in CONNECT and a fresh one in answer to AUTH_CHALLENGE", async () => {
    let issued = 0;
    const b = await broker((command, connection) => {
      if (command.type === CommandType.CONNECT) {
        connection.reply({
          type: CommandType.CONNECTED,
          connected: { serverVersion: "s", protocolVersion: 20 },
        });
        connection.reply({
          type: CommandType.AUTH_CHALLENGE,
          authChallenge: { challenge: { authMethodName: "token", authData: bytes("refresh") } },
        });
        return true;
      }
      return false;
    });
    const c = client({ serviceUrl: b.url, token: () => `token-${++issued}` });
    await c.createProducer({ topic: "authenticated" });
    const connect = b.connections[0]!.received[0]!.connect!;
    expect(connect.authMethodName).toBe("token");
    expect(text(connect.authData!)).toBe("token-1");
    expect(connect.featureFlags?.supportsAuthRefresh).toBe(true);
    await eventually(
      () => b.connections[0]!.received.some((x) => x.type === CommandType.AUTH_RESPONSE),
      5000,
      "AUTH_RESPONSE",
    );
    const answer = b.connections[0]!.received.find((x) => x.type === CommandType.AUTH_RESPONSE)!
      .authResponse!;
    expect(answer.response?.authMethodName).toBe("token");
    expect(text(answer.response!.authData!)).toBe("token-2");
  });

  it("a refused handshake fails at once with the server's AuthenticationError", async () => {
    const b = await broker((command, connection) => {
      if (command.type !== CommandType.CONNECT) return false;
      connection.reply({
        type: CommandType.ERROR,
        error: { requestId: 0, error: ServerError.AuthenticationError, message: "bad token" },
      });
      return true;
    });
    const error = await client({ serviceUrl: b.url, token: "wrong" })
      .createProducer({ topic: "t" })
      .catch((e: unknown) => e);
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect(((error as Error).cause as PulsarServerError).serverError).toBe("AuthenticationError");
    expect(b.connections).toHaveLength(1);
  });

  it("the real standalone accepts a CONNECT carrying a token its key signed", async () => {
    // tooling/brokers turns token authentication on (a client without one is the anonymous role).
    const c = client({
      serviceUrl: requireEnv("PULSAR_TOKEN_URL"),
      token: requireEnv("PULSAR_TOKEN"),
    });
    const producer = await c.createProducer({ topic: uniqueName("token") });
    await producer.send({ payload: bytes("x") });
  });
});

describe("negotiated max_message_size", () => {
  it("refuses a payload over the size CONNECTED announced, sending nothing", async () => {
    const b = await broker(() => false, { maxMessageSize: 1000 });
    const producer = await client({ serviceUrl: b.url }).createProducer({
      topic: "small",
      batching: false,
    });
    const refused = await producer.send({ payload: new Uint8Array(1001) }).catch((e: unknown) => e);
    expect(isRustStreamError(refused, "publish-refused")).toBe(true);
    await producer.send({ payload: new Uint8Array(900).fill(7) });
    const sends = b.connections
      .flatMap((c) => c.received)
      .filter((x) => x.type === CommandType.SEND);
    expect(sends).toHaveLength(1);
    expect(b.connections.flatMap((c) => c.messages).map((m) => Buffer.from(m))).toEqual([
      Buffer.alloc(900, 7),
    ]);
  });
});

describe("TLS", () => {
  /** A CA and a server certificate it signed for 127.0.0.1, as the test brokers' (tooling/brokers). */
  async function certificates(): Promise<{ key: string; cert: string; ca: string }> {
    const dir = mkdtempSync(join(tmpdir(), "rs-pulsar-tls-"));
    const files = await ensureTestCertificates(dir, "ruststream scripted broker test CA");
    const read = (path: string) => readFileSync(path, "utf8");
    return { key: read(files.key), cert: read(files.cert), ca: read(files.ca) };
  }

  it("speaks the protocol over pulsar+ssl:// trusting the given CA, and refuses an untrusted certificate", async () => {
    const tls = await certificates();
    const b = await broker(() => false, { tls: { key: tls.key, cert: tls.cert } });
    expect(b.url.startsWith("pulsar+ssl://")).toBe(true);
    const producer = await client({ serviceUrl: b.url, tls: { ca: tls.ca } }).createProducer({
      topic: "secure",
    });
    await producer.send({ payload: bytes("encrypted") });
    expect(b.connections.flatMap((c) => c.messages).map(text)).toEqual(["encrypted"]);

    const untrusting = client({
      serviceUrl: b.url,
      operationTimeoutMs: 1000,
      backoff: { initialMs: 50, maxMs: 100 },
    });
    const error = await untrusting.createProducer({ topic: "secure" }).catch((e: unknown) => e);
    expect(isRustStreamError(error, "broker-failure")).toBe(true);
    expect((error as Error).message).toMatch(/certificate/);
  });
});
