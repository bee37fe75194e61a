import { type Delivery, headerNames, isRustStreamError } from "@ruststream/core";
import { bytes, text } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedRedisBroker,
  RedisList,
  RedisPublish,
  RedisPubSub,
  type RedisSource,
  RedisStream,
} from "../src/index.js";
import type { RedisTransport } from "../src/publisher.js";
import { sameOnServerAndStandIn } from "./serverAndStandIn.js";

// One script of settlements, run against the real server and against the in-process mode: every
// answer, every redelivery count, retry-count header and payload must be the same on both, and what
// the README promises for the transport, so a fault the two share fails too.

type Verb = "ack" | "requeue" | "drop" | "later";

async function settle(d: Delivery, verb: Verb): Promise<string> {
  try {
    if (verb === "ack") return await d.ack();
    if (verb === "requeue") return await d.nack({ requeue: true });
    if (verb === "drop") return await d.nack({ requeue: false });
    return await d.nackAfter(50);
  } catch (error) {
    // Codes are the stable part of an error; messages are for people.
    return isRustStreamError(error) ? error.code : `error: ${(error as Error).message}`;
  }
}

async function script(
  connected: ConnectedRedisBroker,
  source: RedisSource,
  transport: RedisTransport,
): Promise<string[]> {
  const log: string[] = [];
  const sub = await connected.subscribe(source);
  const publisher = await new RedisPublish({ transport }).pair(connected);
  const verbs: Verb[] = ["requeue", "later", "drop", "ack"];
  for (const [i, verb] of verbs.entries()) {
    await publisher.publish({ name: source.name, payload: bytes(`m${i}`) });
    const first = await sub.next();
    if (first.done) throw new Error("ended");
    const d = first.value;
    const answer = await settle(d, verb);
    log.push(`${text(d.payload)} #${d.redeliveryCount} ${verb} -> ${answer}`);
    if (answer === "unsupported") log.push(`  then ack -> ${await settle(d, "ack")}`);
    if (answer === "ok" && (verb === "requeue" || verb === "later")) {
      const again = await sub.next();
      if (again.done) throw new Error("ended");
      const retryCount = again.value.headers.getString(headerNames.retryCount);
      log.push(
        `${text(again.value.payload)} #${again.value.redeliveryCount} retry-count ${retryCount} back, ack -> ${await settle(again.value, "ack")}`,
      );
    }
    log.push(`  twice -> ${await settle(d, "ack")}`);
  }
  await sub.close();
  return log;
}

// What each transport answers, as the README's table has it: a stream settles every verb, its
// copies come back as fresh entries (one delivery of their own) counting the earlier ones in the
// retry-count header; a list has no delayed retry; Pub/Sub settles nothing and counts nothing.
const cases: Array<[string, (key: string) => RedisSource, RedisTransport, string[]]> = [
  [
    "stream",
    (key) => new RedisStream(key, { group: "answers", blockMs: 200 }),
    "stream",
    [
      "m0 #1 requeue -> ok",
      "m0 #1 retry-count 1 back, ack -> ok",
      "  twice -> already-settled",
      "m1 #1 later -> ok",
      "m1 #1 retry-count 1 back, ack -> ok",
      "  twice -> already-settled",
      "m2 #1 drop -> ok",
      "  twice -> already-settled",
      "m3 #1 ack -> ok",
      "  twice -> already-settled",
    ],
  ],
  [
    "reliable list",
    (key) => new RedisList(key, { blockMs: 200 }),
    "list",
    [
      "m0 #1 requeue -> ok",
      "m0 #1 retry-count 1 back, ack -> ok",
      "  twice -> already-settled",
      "m1 #1 later -> unsupported",
      "  then ack -> ok",
      "  twice -> already-settled",
      "m2 #1 drop -> ok",
      "  twice -> already-settled",
      "m3 #1 ack -> ok",
      "  twice -> already-settled",
    ],
  ],
  [
    "pub/sub",
    (key) => new RedisPubSub(key),
    "pubsub",
    [
      "m0 #undefined requeue -> unsupported",
      "  then ack -> unsupported",
      "  twice -> unsupported",
      "m1 #undefined later -> unsupported",
      "  then ack -> unsupported",
      "  twice -> unsupported",
      "m2 #undefined drop -> unsupported",
      "  then ack -> unsupported",
      "  twice -> unsupported",
      "m3 #undefined ack -> unsupported",
      "  then ack -> unsupported",
      "  twice -> unsupported",
    ],
  ],
];

describe("settlement answers: server and in-process alike", () => {
  for (const [label, make, transport, expected] of cases) {
    it(label, async () => {
      const live = await sameOnServerAndStandIn(label, (connected, key) =>
        script(connected, make(key), transport),
      );
      expect(live).toEqual(expected);
    });
  }
});
