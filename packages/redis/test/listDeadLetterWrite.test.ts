import { type Delivery, readRetryCount } from "@ruststream/core";
import { sleep, text } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedRedisBroker,
  type RedisListSubscription,
  RedisPublish,
} from "../src/index.js";
import { first, HELD_FOR_DEAD_MS, held, list, publish } from "./listHelpers.js";
import { sameOnServerAndStandIn } from "./serverAndStandIn.js";

// The runtime dead-letters a value of a reliable list as a publish naming the value as its cause,
// then an ack. The publish writes the dead letter and releases the value (processing list and
// claim) in one step, only while the value is still held; the ack after it removes nothing. Written
// as two steps, a kill between them left the value held, and the sweeper gave it back to be
// dead-lettered a second time. Each case runs against the real server and the in-process stand-in,
// which must agree.

/** What the server holds for `key`: queued, held, claimed, dead-lettered. */
async function counts(connected: ConnectedRedisBroker, key: string): Promise<string> {
  const dead = await connected.link.call("LLEN", [`${key}.dlq`]);
  return `${await held(connected, key)}, dead ${dead}`;
}

/** As the runtime dead-letters: a publish to the list's dead letter naming the delivery its cause. */
async function deadLetter(connected: ConnectedRedisBroker, d: Delivery): Promise<string> {
  const publisher = await new RedisPublish({ transport: "list" }).pair(connected);
  await publisher.publish({
    name: `${d.name}.dlq`,
    payload: d.payload,
    deadLetterOrigin: { source: d.name, position: String(d.position), reason: "rejected" },
    cause: d,
    replacesCause: true,
  });
  return "published";
}

/** Two equal values held; the first dead-lettered, twice (a lost reply), then acked. */
async function holder(connected: ConnectedRedisBroker, key: string): Promise<string[]> {
  const log: string[] = [];
  await publish(connected, key, "m", "m");
  const a = (await connected.subscribe(list(key, 60_000))) as RedisListSubscription;
  const [d1, d2] = [await first(a), await first(a)];
  log.push(`held -> ${await counts(connected, key)}`);
  log.push(`dead letter -> ${await deadLetter(connected, d1)}; ${await counts(connected, key)}`);
  log.push(`again -> ${await deadLetter(connected, d1)}; ${await counts(connected, key)}`);
  // The ack after it must not take the equal value the second delivery holds.
  log.push(`then ack -> ${await d1.ack()}; ${await counts(connected, key)}`);
  log.push(`second ack -> ${await d2.ack()}; ${await counts(connected, key)}`);
  await a.close();
  return log;
}

/** The holder dies after the dead letter's write, before its ack: the sweeper finds nothing. */
async function killedBeforeTheAck(connected: ConnectedRedisBroker, key: string): Promise<string[]> {
  const log: string[] = [];
  await publish(connected, key, "m");
  const a = (await connected.subscribe(list(key, 60_000))) as RedisListSubscription;
  const d = await first(a);
  log.push(`dead letter -> ${await deadLetter(connected, d)}; ${await counts(connected, key)}`);
  // Gone without a word: no ack, no give-back (a closed subscription gives back only what it never
  // handed out). A sweeper that finds the value held past its idle time gives it back.
  await a.close();
  await sleep(HELD_FOR_DEAD_MS + 50);
  const b = (await connected.subscribe(list(key, HELD_FOR_DEAD_MS))) as RedisListSubscription;
  await publish(connected, key, "n");
  const next = await first(b);
  log.push(`sweeper's next -> "${text(next.payload)}"; ${await counts(connected, key)}`);
  await next.ack();
  await b.close();
  return log;
}

/** The holder was taken for dead and its value given back and taken by another: nothing written. */
async function loser(connected: ConnectedRedisBroker, key: string): Promise<string[]> {
  const log: string[] = [];
  await publish(connected, key, "m");
  const a = (await connected.subscribe(list(key, 60_000))) as RedisListSubscription;
  const d = await first(a);
  await sleep(HELD_FOR_DEAD_MS + 50);
  const b = (await connected.subscribe(list(key, HELD_FOR_DEAD_MS))) as RedisListSubscription;
  const recovered = await first(b);
  log.push(`recovered by b, retry count ${readRetryCount(recovered.headers)}`);
  log.push(`a: dead letter -> ${await deadLetter(connected, d)}; ${await counts(connected, key)}`);
  log.push(`a: then ack -> ${await d.ack()}; ${await counts(connected, key)}`);
  log.push(`b: ack -> ${await recovered.ack()}; ${await counts(connected, key)}`);
  await a.close();
  await b.close();
  return log;
}

describe("a reliable list's dead letter leaves with its value, once: server and in-process alike", () => {
  it("by the holder: one copy, the value and its claim released in the same step, an equal value kept", async () => {
    expect(await sameOnServerAndStandIn("listdlholder", holder)).toEqual([
      "held -> queue 0, processing 2, claims 2, dead 0",
      "dead letter -> published; queue 0, processing 1, claims 1, dead 1",
      "again -> published; queue 0, processing 1, claims 1, dead 1",
      "then ack -> ok; queue 0, processing 1, claims 1, dead 1",
      "second ack -> ok; queue 0, processing 0, claims 0, dead 1",
    ]);
  });

  it("by a holder killed before its ack: the sweeper finds nothing to give back", async () => {
    expect(await sameOnServerAndStandIn("listdlkilled", killedBeforeTheAck)).toEqual([
      "dead letter -> published; queue 0, processing 0, claims 0, dead 1",
      'sweeper\'s next -> "n"; queue 0, processing 1, claims 1, dead 1',
    ]);
  });

  it("by a holder whose value was given back and taken by another: nothing written, nothing removed", async () => {
    expect(await sameOnServerAndStandIn("listdlloser", loser)).toEqual([
      "recovered by b, retry count 1",
      "a: dead letter -> published; queue 0, processing 1, claims 1, dead 0",
      "a: then ack -> ok; queue 0, processing 1, claims 1, dead 0",
      "b: ack -> ok; queue 0, processing 0, claims 0, dead 0",
    ]);
  });
});
