import { type Delivery, headerNames, isRustStreamError, systemClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  type ConnectedPulsarBroker,
  PulsarBroker,
  type PulsarDelivery,
  PulsarExclusive,
  PulsarFailover,
  PulsarKeyShared,
  PulsarShared,
  type PulsarSource,
  type PulsarSubscription,
} from "../src/index.js";

// One script of settlements, run against the real broker and against the in-process mode: every
// answer, redelivery count, retry-count header and topic must be the same on both, and what the
// README promises for the subscription type, so a fault the two share fails too.

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

async function next(sub: PulsarSubscription, step: string): Promise<PulsarDelivery> {
  let timer: NodeJS.Timeout | undefined;
  const got = await Promise.race([
    sub.next(),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${step}: nothing within 10 s`)), 10_000);
    }),
  ]).finally(() => clearTimeout(timer));
  if (got.done) throw new Error(`${step}: the subscription ended`);
  return got.value;
}

/** What one delivery looks like in the log: payload, broker count, retry-count header, topic. */
function shown(d: PulsarDelivery): string {
  const count = d.headers.getString(headerNames.retryCount) ?? "-";
  return `${text(d.payload)} #${d.redeliveryCount ?? "-"} retry-count ${count}${d.fromRetryTopic ? " (retry topic)" : ""}`;
}

async function script(connected: ConnectedPulsarBroker, source: PulsarSource): Promise<string[]> {
  const log: string[] = [];
  const sub = await connected.subscribe(source);
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  const verbs: Verb[] = ["requeue", "later", "drop", "ack"];
  for (const [i, verb] of verbs.entries()) {
    await publisher.publish({ name: source.name, payload: bytes(`m${i}`) });
    const d = await next(sub, `m${i}`);
    const answer = await settle(d, verb);
    log.push(`${shown(d)}: ${verb} -> ${answer}`);
    if (answer === "unsupported") log.push(`  then ack -> ${await settle(d, "ack")}`);
    if (answer === "ok" && (verb === "requeue" || verb === "later")) {
      const again = await next(sub, `m${i} again`);
      log.push(`  back: ${shown(again)}, ack -> ${await settle(again, "ack")}`);
    }
    log.push(`  twice -> ${await settle(d, "ack")}`);
  }
  // Nothing else comes: the sentinel is the next delivery.
  await publisher.publish({ name: source.name, payload: bytes("sentinel") });
  const last = await next(sub, "sentinel");
  log.push(`then ${text(last.payload)}`);
  await last.ack();
  await sub.close();
  return log;
}

/** A message requeued until the declared cap, then read from the dead letter. */
async function deadLetterScript(
  connected: ConnectedPulsarBroker,
  source: PulsarShared | PulsarKeyShared,
  dlq: string,
): Promise<string[]> {
  const log: string[] = [];
  const dead = await connected.subscribe(new PulsarShared(dlq, { subscription: "reader" }));
  const sub = await connected.subscribe(source.declareRetry({ maxAttempts: 2, deadLetter: dlq }));
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  await publisher.publish({ name: source.name, payload: bytes("poison"), partitionKey: "k" });
  for (let attempt = 1; attempt <= 2; attempt++) {
    const d = await next(sub, `attempt ${attempt}`);
    log.push(`${shown(d)}: requeue -> ${await settle(d, "requeue")}`);
  }
  const moved = await next(dead, "the dead letter");
  const h = moved.headers;
  log.push(
    `dead letter: ${text(moved.payload)} key ${text(moved.partitionKey ?? bytes("-"))}, reason ${h.getString("x-ruststream-dlq-reason")}, source ${h.getString("x-ruststream-dlq-source")}, real topic ${h.getString("real_topic")}, origin id given ${h.has("origin_message_id")}, position given ${h.has("x-ruststream-dlq-position")}`,
  );
  await moved.ack();
  await publisher.publish({ name: source.name, payload: bytes("sentinel") });
  log.push(`then ${text((await next(sub, "sentinel")).payload)}`);
  await sub.close();
  await dead.close();
  return log;
}

const shared: string[] = [
  `m0 #1 retry-count -: requeue -> ok`,
  `  back: m0 #2 retry-count -, ack -> ok`,
  "  twice -> already-settled",
  `m1 #1 retry-count -: later -> ok`,
  // The copy carries the delivery the original had; the broker's count starts again.
  `  back: m1 #1 retry-count 1 (retry topic), ack -> ok`,
  "  twice -> already-settled",
  `m2 #1 retry-count -: drop -> ok`,
  "  twice -> already-settled",
  `m3 #1 retry-count -: ack -> ok`,
  "  twice -> already-settled",
  "then sentinel",
];

const single: string[] = [
  "m0 #- retry-count -: requeue -> ok",
  "  back: m0 #- retry-count 1 (retry topic), ack -> ok",
  "  twice -> already-settled",
  "m1 #- retry-count -: later -> unsupported",
  "  then ack -> ok",
  "  twice -> already-settled",
  "m2 #- retry-count -: drop -> ok",
  "  twice -> already-settled",
  "m3 #- retry-count -: ack -> ok",
  "  twice -> already-settled",
  "then sentinel",
];

const kinds: [string, (name: string) => PulsarSource, string[]][] = [
  ["Shared", (name) => new PulsarShared(name, { subscription: "script" }), shared],
  ["Key_Shared", (name) => new PulsarKeyShared(name, { subscription: "script" }), shared],
  ["Exclusive", (name) => new PulsarExclusive(name, { subscription: "script" }), single],
  ["Failover", (name) => new PulsarFailover(name, { subscription: "script" }), single],
];

async function both<T>(
  work: (connected: ConnectedPulsarBroker) => Promise<T>,
): Promise<{ server: T; inProcess: T }> {
  const real = await new PulsarBroker({ url: requireEnv("PULSAR_URL") }).connect();
  let server: T;
  try {
    server = await work(real);
  } finally {
    await real.shutdown();
  }
  const local = await new PulsarBroker({ url: "pulsar://in-process.invalid" }).connectInProcess({
    coordinator: new CountingCoordinator(),
    clock: systemClock,
  });
  try {
    return { server, inProcess: await work(local) };
  } finally {
    await local.shutdown();
  }
}

describe("a script of settlements answers alike on the broker and in-process", () => {
  for (const [kind, makeSource, expected] of kinds) {
    it(`${kind}: every verb, its answer, what comes back`, async () => {
      const { server, inProcess } = await both((c) => script(c, makeSource(uniqueName("script"))));
      expect(server).toEqual(expected);
      expect(inProcess).toEqual(server);
    });
  }

  for (const [kind, make] of [
    ["Shared", (name: string) => new PulsarShared(name, { subscription: "script" })],
    ["Key_Shared", (name: string) => new PulsarKeyShared(name, { subscription: "script" })],
  ] as const) {
    it(`${kind}: a declared cap moves the message to the dead letter with its origin`, async () => {
      const { server, inProcess } = await both((c) => {
        const topic = uniqueName("capped");
        return deadLetterScript(c, make(topic), `${topic}-script-DLQ`);
      });
      expect(
        server.map((line) => line.replace(/rs-test-capped-[0-9a-f]+-[0-9a-f]+/g, "T")),
      ).toEqual([
        "poison #1 retry-count -: requeue -> ok",
        "poison #2 retry-count -: requeue -> ok",
        "dead letter: poison key k, reason max-attempts, source T, real topic persistent://public/default/T, origin id given true, position given true",
        "then sentinel",
      ]);
      expect(inProcess.map((l) => l.replace(/rs-test-capped-[0-9a-f]+-[0-9a-f]+/g, "T"))).toEqual(
        server.map((l) => l.replace(/rs-test-capped-[0-9a-f]+-[0-9a-f]+/g, "T")),
      );
    });
  }
});
