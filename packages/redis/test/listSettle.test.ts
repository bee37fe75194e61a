import { type Delivery, readRetryCount } from "@ruststream/core";
import { writeRetryCount } from "@ruststream/core/broker";
import { sleep } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedRedisBroker,
  type RedisListSubscription,
  RedisPublish,
} from "../src/index.js";
import { first, HELD_FOR_DEAD_MS, held, list, publish } from "./listHelpers.js";
import { sameOnServerAndStandIn } from "./serverAndStandIn.js";

// Every settlement of a reliable list's value (ack, retry, give-back) releases it only while its
// holder still holds it, in one step with the copy it writes. ioredis sends again what was
// unanswered when a connection dropped, so a settlement whose reply a cut took runs twice; as a
// MULTI of a push and a release, a retry sent twice wrote two copies (both later reached the dead
// letter), and an ack sent twice took an equal value another delivery held. Each case calls the
// settlement twice, as the resend does, against the real server and the in-process stand-in.

const retries = (d: Delivery) => readRetryCount(d.headers);

/** A retry sent twice: one copy on the queue. */
function retryTwice(recoveryIdleMs?: number) {
  return async (connected: ConnectedRedisBroker, key: string): Promise<string[]> => {
    const log: string[] = [];
    await publish(connected, key, "m");
    const a = (await connected.subscribe(list(key, recoveryIdleMs))) as RedisListSubscription;
    const d = await first(a);
    await a.requeue(d);
    log.push(`retry -> ${await held(connected, key)}`);
    await a.requeue(d);
    log.push(`sent again -> ${await held(connected, key)}`);
    const copy = await first(a);
    log.push(`the copy's retry count ${retries(copy)}`);
    await copy.ack();
    await a.close();
    return log;
  };
}

/**
 * The retry copy the runtime publishes (a delayed retry's, once its delay is over) names the value
 * it replaces: written with the value's release, once, however often it is sent.
 */
async function retryCopyTwice(connected: ConnectedRedisBroker, key: string): Promise<string[]> {
  const log: string[] = [];
  await publish(connected, key, "m");
  const a = (await connected.subscribe(list(key, 60_000))) as RedisListSubscription;
  const d = await first(a);
  const publisher = await new RedisPublish({ transport: "list" }).pair(connected);
  const copy = {
    name: key,
    payload: d.payload,
    headers: writeRetryCount(d.headers.clone(), 1),
    cause: d,
    replacesCause: true,
  };
  await publisher.publish(copy);
  log.push(`retry copy -> ${await held(connected, key)}`);
  await publisher.publish(copy);
  log.push(`sent again -> ${await held(connected, key)}`);
  log.push(`then ack -> ${await d.ack()}; ${await held(connected, key)}`);
  const next = await first(a);
  log.push(`the copy's retry count ${retries(next)}`);
  await next.ack();
  await a.close();
  return log;
}

/** Two equal values held, the first acked twice: the second stays held. */
async function ackTwice(connected: ConnectedRedisBroker, key: string): Promise<string[]> {
  const log: string[] = [];
  await publish(connected, key, "m", "m");
  const a = (await connected.subscribe(list(key, 60_000))) as RedisListSubscription;
  const [d1, d2] = [await first(a), await first(a)];
  await a.remove(d1);
  log.push(`ack -> ${await held(connected, key)}`);
  await a.remove(d1);
  log.push(`sent again -> ${await held(connected, key)}`);
  await d2.ack();
  log.push(`second ack -> ${await held(connected, key)}`);
  await a.close();
  return log;
}

/** The holder was taken for dead and its value given back and taken by another. */
function afterTheSweep(settle: "retry" | "give back") {
  return async (connected: ConnectedRedisBroker, key: string): Promise<string[]> => {
    const log: string[] = [];
    await publish(connected, key, "m");
    const a = (await connected.subscribe(list(key, 60_000))) as RedisListSubscription;
    const d = await first(a);
    await sleep(HELD_FOR_DEAD_MS + 50);
    const b = (await connected.subscribe(list(key, HELD_FOR_DEAD_MS))) as RedisListSubscription;
    const recovered = await first(b);
    log.push(`recovered by b, retry count ${retries(recovered)}`);
    if (settle === "retry") await a.requeue(d);
    else log.push(`a surrenders ${await a.surrender()} held`);
    log.push(`a: ${settle} -> ${await held(connected, key)}`);
    await recovered.ack();
    log.push(`b: ack -> ${await held(connected, key)}`);
    await a.close();
    await b.close();
    return log;
  };
}

describe("a reliable list's value is settled once, by its holder: server and in-process alike", () => {
  it("a retry sent again (a resend after a cut reply) writes one copy, recovery on", async () => {
    expect(await sameOnServerAndStandIn("listretrytwice", retryTwice(60_000))).toEqual([
      "retry -> queue 1, processing 0, claims 0",
      "sent again -> queue 1, processing 0, claims 0",
      "the copy's retry count 1",
    ]);
  });

  it("a retry sent again writes one copy, recovery off (the value found by its bytes)", async () => {
    expect(await sameOnServerAndStandIn("listretrytwiceoff", retryTwice())).toEqual([
      "retry -> queue 1, processing 0, claims 0",
      "sent again -> queue 1, processing 0, claims 0",
      "the copy's retry count 1",
    ]);
  });

  it("the runtime's retry copy is written with the value's release, once however often it is sent", async () => {
    expect(await sameOnServerAndStandIn("listretrycopy", retryCopyTwice)).toEqual([
      "retry copy -> queue 1, processing 0, claims 0",
      "sent again -> queue 1, processing 0, claims 0",
      "then ack -> ok; queue 1, processing 0, claims 0",
      "the copy's retry count 1",
    ]);
  });

  it("an ack sent again leaves an equal value another delivery holds", async () => {
    expect(await sameOnServerAndStandIn("listacktwice", ackTwice)).toEqual([
      "ack -> queue 0, processing 1, claims 1",
      "sent again -> queue 0, processing 1, claims 1",
      "second ack -> queue 0, processing 0, claims 0",
    ]);
  });

  it("a holder whose value a sweeper gave back: its retry writes nothing", async () => {
    expect(await sameOnServerAndStandIn("listretryloser", afterTheSweep("retry"))).toEqual([
      "recovered by b, retry count 1",
      "a: retry -> queue 0, processing 1, claims 1",
      "b: ack -> queue 0, processing 0, claims 0",
    ]);
  });

  it("a holder whose value a sweeper gave back: closing gives nothing back", async () => {
    expect(await sameOnServerAndStandIn("listgivebackloser", afterTheSweep("give back"))).toEqual([
      "recovered by b, retry count 1",
      "a surrenders 1 held",
      "a: give back -> queue 0, processing 1, claims 1",
      "b: ack -> queue 0, processing 0, claims 0",
    ]);
  });
});
