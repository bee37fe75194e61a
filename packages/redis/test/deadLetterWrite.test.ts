import type { Delivery } from "@ruststream/core";
import { bytes } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { array } from "../src/client/resp.js";
import {
  type ConnectedRedisBroker,
  RedisPublish,
  RedisStream,
  type RedisStreamSubscription,
} from "../src/index.js";
import { sameOnServerAndStandIn } from "./serverAndStandIn.js";

// A copy of a stream entry (requeued, parked for a delayed retry, dead-lettered by the broker or by
// the runtime) is written with the entry's ack in one step, and only by the consumer that holds the
// entry. Each script runs against the real server and the in-process stand-in, which must agree.

type Move = "requeue" | "later" | "broker dead letter" | "runtime dead letter";
const moves: Move[] = ["requeue", "later", "broker dead letter", "runtime dead letter"];

function source(key: string, consumer: string, reclaimIdleMs?: number): RedisStream {
  return new RedisStream(key, {
    group: "g",
    consumer,
    blockMs: 50,
    ...(reclaimIdleMs === undefined ? {} : { reclaimIdleMs }),
    delayedRetry: { key: `${key}.delayed` },
    retry: { maxAttempts: 5, deadLetter: `${key}.dlq` },
  });
}

/**
 * What the server holds for `key`: entries on the stream, parked retries, dead letters, and whether
 * the moved entry itself is still pending (a requeued copy is read ahead, and pending in its turn).
 */
async function counts(connected: ConnectedRedisBroker, key: string, d: Delivery): Promise<string> {
  const link = connected.link;
  const id = String(d.position);
  const stream = await link.call("XLEN", [key]);
  const delayed = await link.call("ZCARD", [`${key}.delayed`]);
  const dead = await link.call("XLEN", [`${key}.dlq`]);
  const pending = array(await link.call("XPENDING", [key, "g", id, id, 1])).length;
  return `stream ${stream}, delayed ${delayed}, dead ${dead}, pending ${pending}`;
}

async function move(connected: ConnectedRedisBroker, d: Delivery, how: Move): Promise<string> {
  if (how === "requeue") return d.nack({ requeue: true });
  if (how === "later") return d.nackAfter(60_000);
  if (how === "broker dead letter") return d.nack({ requeue: false });
  // As the runtime dead-letters: a publish naming the delivery as the cause it replaces, then the ack.
  const publisher = await new RedisPublish().pair(connected);
  const receipt = await publisher.publish({
    name: `${d.name}.dlq`,
    payload: d.payload,
    deadLetterOrigin: { source: d.name, position: String(d.position), reason: "rejected" },
    cause: d,
    replacesCause: true,
  });
  return `published (${receipt.position === undefined ? "no position" : "at a position"})`;
}

async function first(sub: RedisStreamSubscription): Promise<Delivery> {
  const next = await sub.next();
  if (next.done) throw new Error("the subscription ended");
  return next.value;
}

/** Consumer "a" subscribes, one message is published, and "a" reads it. */
async function readByA(
  connected: ConnectedRedisBroker,
  key: string,
): Promise<{ a: RedisStreamSubscription; d: Delivery }> {
  const a = (await connected.subscribe(source(key, "a"))) as RedisStreamSubscription;
  const publisher = await new RedisPublish().pair(connected);
  await publisher.publish({ name: key, payload: bytes("m") });
  return { a, d: await first(a) };
}

/** The holder moves the entry: one copy, nothing pending; the runtime's publish again writes none. */
async function holder(connected: ConnectedRedisBroker, key: string, how: Move): Promise<string[]> {
  const log: string[] = [];
  const { a, d } = await readByA(connected, key);
  log.push(`${how} -> ${await move(connected, d, how)}; ${await counts(connected, key, d)}`);
  if (how === "runtime dead letter") {
    // A runtime that lost the publish's reply (a cut connection) publishes it again.
    log.push(`again -> ${await move(connected, d, how)}; ${await counts(connected, key, d)}`);
    log.push(`then ack -> ${await d.ack()}; ${await counts(connected, key, d)}`);
  }
  await a.close();
  return log;
}

/** A consumer whose entry another reclaimed moves it: nothing written, the new holder keeps it. */
async function loser(connected: ConnectedRedisBroker, key: string, how: Move): Promise<string[]> {
  const log: string[] = [];
  const { a, d } = await readByA(connected, key);
  await new Promise((resolve) => setTimeout(resolve, 120));
  const b = (await connected.subscribe(source(key, "b", 100))) as RedisStreamSubscription;
  const reclaimed = await first(b);
  log.push(`reclaimed by b, delivery ${reclaimed.redeliveryCount}`);
  log.push(`a: ${how} -> ${await move(connected, d, how)}; ${await counts(connected, key, d)}`);
  if (how === "runtime dead letter") {
    // The runtime acks once the publish answered: that must not ack the entry b holds now, or b's
    // own dead letter of it would find it no longer pending and write nothing.
    log.push(`a: then ack -> ${await d.ack()}; ${await counts(connected, key, d)}`);
  }
  log.push(`b: ack -> ${await reclaimed.ack()}; ${await counts(connected, key, d)}`);
  await a.close();
  await b.close();
  return log;
}

describe("a copy leaves with its entry's ack, once: server and in-process alike", () => {
  const written: Record<Move, string> = {
    requeue: "stream 2, delayed 0, dead 0, pending 0",
    later: "stream 1, delayed 1, dead 0, pending 0",
    "broker dead letter": "stream 1, delayed 0, dead 1, pending 0",
    "runtime dead letter": "stream 1, delayed 0, dead 1, pending 0",
  };
  for (const how of moves) {
    it(`${how} by the holder: one copy, the entry acked in the same step`, async () => {
      const expected = [
        `${how} -> ${how === "runtime dead letter" ? "published (at a position)" : "ok"}; ${written[how]}`,
      ];
      if (how === "runtime dead letter") {
        // Sent again, it writes nothing (the entry is no longer pending); the ack after is a no-op.
        expected.push(`again -> published (no position); ${written[how]}`);
        expected.push(`then ack -> ok; ${written[how]}`);
      }
      expect(await sameOnServerAndStandIn(how, (c, key) => holder(c, key, how))).toEqual(expected);
    });

    it(`${how} by a consumer that lost the entry to a reclaim: nothing written`, async () => {
      const answer = how === "runtime dead letter" ? "published (no position)" : "ok";
      expect(await sameOnServerAndStandIn(how, (c, key) => loser(c, key, how))).toEqual([
        "reclaimed by b, delivery 2",
        `a: ${how} -> ${answer}; stream 1, delayed 0, dead 0, pending 1`,
        ...(how === "runtime dead letter"
          ? ["a: then ack -> ok; stream 1, delayed 0, dead 0, pending 1"]
          : []),
        "b: ack -> ok; stream 1, delayed 0, dead 0, pending 0",
      ]);
    });
  }
});
