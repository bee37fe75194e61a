import { isRustStreamError, ManualClock } from "@ruststream/core";
import { bytes, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedNatsBroker,
  JetStreamSubject,
  NatsPublish,
  type NatsReceipt,
} from "../src/index.js";
import { eventually } from "./env.live.js";
import { openedPerTest, targets } from "./targets.js";

// Publishing to JetStream: receipts from the stream's acknowledgement, message-id deduplication,
// the expectations, a message's own TTL, and what is refused before anything is sent. On the real server and on the
// stand-in alike.

const { connections, streams } = openedPerTest();

/** A connection, a stream on a subject of its own (declared through a subscription), a publisher. */
async function setUp(connect: () => Promise<ConnectedNatsBroker>, messageTtl = false) {
  const connected = await connect();
  connections.push(connected);
  const subject = uniqueName("pub");
  streams.push(subject);
  const subscription = await connected.subscribe(
    new JetStreamSubject(subject, {
      stream: subject,
      declare: { subjects: [subject], storage: "memory", messageTtl },
    }),
  );
  const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
  return { connected, subject, subscription, publisher };
}

async function refusal(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error("the publish was not refused");
}

for (const [where, connect] of targets) {
  describe(`JetStream publishing, ${where}`, () => {
    it("a receipt names the stream and sequence; a repeated message id is a duplicate, stored once", async () => {
      const { subject, subscription, publisher } = await setUp(connect);
      const first = (await publisher.publish({
        name: subject,
        payload: bytes("a"),
        options: { msgId: "order-1" },
      })) as NatsReceipt;
      const again = (await publisher.publish({
        name: subject,
        payload: bytes("a, again"),
        options: { msgId: "order-1" },
      })) as NatsReceipt;
      const other = (await publisher.publish({
        name: subject,
        payload: bytes("b"),
        options: { msgId: "order-2" },
      })) as NatsReceipt;
      expect([first, again, other].map((r) => [r.stream, r.sequence, r.duplicate])).toEqual([
        [subject, 1n, false],
        [subject, 1n, true],
        [subject, 2n, false],
      ]);
      expect(first.position).toBe(`${subject}:1`);
      // A sentinel behind them: what arrives before it is everything the stream stored.
      await publisher.publish({ name: subject, payload: bytes("sentinel") });
      const got: string[] = [];
      while (got.at(-1) !== "sentinel") {
        const d = (await subscription.next()).value;
        if (d === undefined) break;
        got.push(text(d.payload));
        await d.ack();
      }
      expect(got).toEqual(["a", "b", "sentinel"]);
    });

    it("an expectation that does not hold is refused by the stream", async () => {
      const { subject, publisher } = await setUp(connect);
      await publisher.publish({
        name: subject,
        payload: bytes("1"),
        options: { expect: { lastSequence: 0 } },
      });
      const wrong = await refusal(
        publisher.publish({
          name: subject,
          payload: bytes("2"),
          options: { expect: { lastSequence: 5 } },
        }),
      );
      expect(String(wrong)).toMatch(/wrong last sequence/i);
      const ok = (await publisher.publish({
        name: subject,
        payload: bytes("2"),
        options: { expect: { lastSequence: 1, stream: subject } },
      })) as NatsReceipt;
      expect(ok.sequence).toBe(2n);
    });

    it("a payload over the server's max_payload is refused before it is sent", async () => {
      const { connected, subject, publisher } = await setUp(connect);
      const max = connected.link.maxPayload;
      const error = await refusal(
        publisher.publish({ name: subject, payload: new Uint8Array(max + 1) }),
      );
      expect(isRustStreamError(error, "publish-refused"), String(error)).toBe(true);
      expect(String(error)).toMatch(/max_payload/);
      const core = await new NatsPublish().pair(connected);
      expect(
        isRustStreamError(
          await refusal(core.publish({ name: subject, payload: new Uint8Array(max + 1) })),
          "publish-refused",
        ),
      ).toBe(true);
    });

    it("msgId and expect on a core publisher are refused, naming the JetStream publisher", async () => {
      const { connected, subject } = await setUp(connect);
      const core = await new NatsPublish().pair(connected);
      const error = await refusal(
        core.publish({ name: subject, payload: bytes("x"), options: { msgId: "1" } }),
      );
      expect(isRustStreamError(error, "unsupported"), String(error)).toBe(true);
      expect(String(error)).toMatch(/jetStream: true/);
    });

    it("a message's own TTL: stored, then gone from the stream; refused by a stream that takes none", async () => {
      const { connected, subject, publisher } = await setUp(connect, true);
      const receipt = (await publisher.publish({
        name: subject,
        payload: bytes("brief"),
        options: { ttlMs: 1000 },
      })) as NatsReceipt;
      const last = await connected.link.message(subject, { lastOn: subject });
      expect([last?.sequence, last?.headers.getString("Nats-TTL")]).toEqual([
        receipt.sequence,
        "1",
      ]);
      if (connected.clock instanceof ManualClock) connected.clock.advance(1000);
      await eventually(
        async () => (await connected.link.message(subject, { lastOn: subject })) === undefined,
        10_000,
        "the message gone after its TTL",
      );
      const plain = await setUp(connect);
      const error = await refusal(
        plain.publisher.publish({
          name: plain.subject,
          payload: bytes("x"),
          options: { ttlMs: 1000 },
        }),
      );
      expect(isRustStreamError(error, "unsupported"), String(error)).toBe(true);
      expect(String(error)).toContain(
        `the stream that stores "${plain.subject}" takes no per-message TTL: allow it`,
      );
      expect(String(error)).toContain("messageTtl: true");
      const never = await refusal(
        plain.publisher.publish({
          name: plain.subject,
          payload: bytes("x"),
          options: { ttlMs: "never" },
        }),
      );
      expect(isRustStreamError(never, "unsupported"), String(never)).toBe(true);
    });

    it("a missing stream is a clear error naming it and the option that declares it", async () => {
      const connected = await connect();
      connections.push(connected);
      const stream = uniqueName("missing");
      const error = await refusal(connected.subscribe(new JetStreamSubject(stream, { stream })));
      expect(isRustStreamError(error, "invalid-argument"), String(error)).toBe(true);
      expect(String(error)).toContain(`"${stream}" does not exist`);
      expect(String(error)).toContain("declare");
    });
  });
}
