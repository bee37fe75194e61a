import { connect as tcpConnect } from "node:net";
import { isRustStreamError } from "@ruststream/core";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  type CoreSubscription,
  JetStreamSubject,
  NatsBroker,
  NatsSubject,
} from "../src/index.js";
import { rawClient } from "./env.live.js";
import { openedPerTest, targets } from "./targets.js";

// What bounds a subscription against a flood or odd input: core NATS pushes whatever is published,
// so what waits for the handler is capped; a header value that is not one line of text is carried
// encoded and read back to its bytes, and a plain client's text that looks encoded is still text.

const { connections, streams } = openedPerTest();

/**
 * A core subscription the server has registered: a message published on the broker's own connection
 * after it arrived back, so what another connection publishes next reaches it.
 */
async function registered(connected: ConnectedNatsBroker, subject: string) {
  const subscription = await connected.subscribe(subject);
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  await publisher.publish({ name: subject, payload: bytes("ready") });
  const ready = (await subscription.next()).value;
  expect(text(ready!.payload)).toBe("ready");
  return subscription;
}

/**
 * Publishes `header` (one line) and `payload` with the protocol's HPUB on a socket of its own: the
 * official client refuses to send a header name that is not printable ASCII, and the server, or a
 * client in another language, does not.
 */
async function publishRaw(subject: string, header: string, payload: string): Promise<void> {
  const url = new URL(requireEnv("NATS_URL"));
  const socket = tcpConnect(Number(url.port), url.hostname);
  try {
    const block = Buffer.from(`NATS/1.0\r\n${header}\r\n\r\n`);
    const body = Buffer.from(payload);
    let seen = "";
    await new Promise<void>((resolve, reject) => {
      socket.on("error", reject);
      socket.on("data", (chunk) => {
        seen += chunk.toString("latin1");
        if (seen.includes("-ERR")) reject(new Error(`the server refused: ${seen}`));
        else if (seen.includes("PONG")) resolve();
      });
      socket.write(
        'CONNECT {"verbose":false,"pedantic":false,"headers":true,"no_responders":true}\r\n',
      );
      socket.write(`HPUB ${subject} ${block.length} ${block.length + body.length}\r\n`);
      socket.write(Buffer.concat([block, body, Buffer.from("\r\nPING\r\n")]));
    });
  } finally {
    socket.destroy();
  }
}

for (const [where, connect] of targets) {
  describe(`limits, ${where}`, () => {
    it("a core subscription keeps at most maxBuffered waiting and counts the rest as dropped", async () => {
      const connected = await connect();
      connections.push(connected);
      const subject = uniqueName("flood");
      const subscription = (await connected.subscribe(
        new NatsSubject(subject, { maxBuffered: 3 }),
      )) as CoreSubscription;
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      for (let i = 0; i < 5; i++)
        await publisher.publish({ name: subject, payload: bytes(`m${i}`) });
      const got = await subscription.nextBatch(10);
      expect(got.map((d) => text(d.payload))).toEqual(["m0", "m1", "m2"]);
      expect(subscription.dropped).toBe(2);
      for (const d of got) await d.ack();
    });
  });
}

describe("header values from a plain NATS client", () => {
  it("text that starts like an encoded value but is not base64 of anything sent stays bounded", async () => {
    const connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();
    connections.push(connected);
    const subject = uniqueName("odd-header");
    const subscription = await connected.subscribe(subject);
    const nc = await rawClient();
    try {
      const { headers } = await import("@nats-io/transport-node");
      const h = headers();
      h.set("x-odd", "=?rs-b64?!!not base64!!");
      nc.publish(subject, "x", { headers: h });
      await nc.flush();
    } finally {
      await nc.close();
    }
    const d = (await subscription.next()).value;
    // Decoded as base64 (the prefix is ours): whatever it reads is no longer than what was sent.
    expect(d?.headers.get("x-odd")?.length ?? 0).toBeLessThan(20);
  });
});

describe("header blocks another client wrote", () => {
  // The client parses the header block when it is read and throws on a name with a space: the
  // message must still arrive, marked unreadable for the decode policy, and the next one after it.
  it("a core message arrives marked unreadable, with its payload, and the next one arrives", async () => {
    const connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();
    connections.push(connected);
    const subject = uniqueName("bad-header");
    const subscription = await registered(connected, subject);
    await publishRaw(subject, "bad name: v", "first");
    await publishRaw(subject, "good-name: v", "second");
    const first = (await subscription.next()).value;
    expect(text(first!.payload)).toBe("first");
    expect(
      isRustStreamError(first!.decodeError, "invalid-argument"),
      String(first!.decodeError),
    ).toBe(true);
    expect(String(first!.decodeError)).toContain("header name");
    const second = (await subscription.next()).value;
    expect(text(second!.payload)).toBe("second");
    expect(second!.decodeError).toBeUndefined();
    expect(second!.headers.getString("good-name")).toBe("v");
  });

  it("a block of 60,000 headers (600 KB) arrives whole, in well under the test's time", async () => {
    // The client's own parse looked up every name it held for each line: 11 s for 30,000.
    const connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();
    connections.push(connected);
    const subject = uniqueName("many-headers");
    const subscription = await registered(connected, subject);
    const count = 60_000;
    const lines = Array.from({ length: count }, (_, i) => `h${i}: ${i}`).join("\r\n");
    await publishRaw(subject, lines, "many");
    const got = (await subscription.next()).value;
    expect(got!.decodeError).toBeUndefined();
    expect(got!.headers.size).toBe(count);
    expect(got!.headers.getString(`h${count - 1}`)).toBe(String(count - 1));
  });

  it("a JetStream message arrives marked unreadable, and the pull goes on", async () => {
    const connected = await new NatsBroker({ servers: requireEnv("NATS_URL") }).connect();
    connections.push(connected);
    const subject = uniqueName("bad-header-js");
    streams.push(subject);
    const subscription = await connected.subscribe(
      new JetStreamSubject(subject, {
        stream: subject,
        declare: { subjects: [subject], storage: "memory" },
      }),
    );
    await publishRaw(subject, "bad name: v", "first");
    await publishRaw(subject, "x-n: 2", "second");
    const first = (await subscription.next()).value;
    expect(text(first!.payload)).toBe("first");
    expect(
      isRustStreamError(first!.decodeError, "invalid-argument"),
      String(first!.decodeError),
    ).toBe(true);
    await first!.ack();
    const second = (await subscription.next()).value;
    expect(text(second!.payload)).toBe("second");
    expect(second!.decodeError).toBeUndefined();
    await second!.ack();
  });
});
