import { type Delivery, headerNames, isRustStreamError, systemClock } from "@ruststream/core";
import { CountingCoordinator } from "@ruststream/core/broker";
import { bytes, requireEnv, text, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { type ConnectedKafkaBroker, KafkaBroker, KafkaTopic } from "../src/index.js";

// One script of settlements, run against the real cluster on each engine and against the
// in-process mode: every answer, redelivery count, retry-count header and payload must be the same
// on all three, and what the README promises for the commit mode, so a fault they share fails too.
// The script ends with a message left unsettled at shutdown and asks a new client of the group what
// comes back.

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

async function next(
  connected: ConnectedKafkaBroker,
  sub: Awaited<ReturnType<ConnectedKafkaBroker["subscribe"]>>,
) {
  const got = await sub.next();
  if (got.done) throw new Error(`the subscription of ${connected.state} connection ended`);
  return got.value;
}

async function script(
  connect: () => Promise<ConnectedKafkaBroker>,
  topic: string,
  commit: "auto" | "tracked",
): Promise<string[]> {
  const log: string[] = [];
  const source = new KafkaTopic(topic, { group: `answers-${topic}`, commit });
  const connected = await connect();
  const sub = await connected.subscribe(source);
  const publisher = await connected.defaultPublishPolicy().pair(connected);
  const verbs: Verb[] = ["requeue", "later", "drop", "ack"];
  for (const [i, verb] of verbs.entries()) {
    await publisher.publish({ name: topic, payload: bytes(`m${i}`) });
    const d = await next(connected, sub);
    const answer = await settle(d, verb);
    log.push(`${text(d.payload)} #${d.redeliveryCount} ${verb} -> ${answer}`);
    if (answer === "unsupported") log.push(`  then ack -> ${await settle(d, "ack")}`);
    if (answer === "ok" && (verb === "requeue" || verb === "later")) {
      const again = await next(connected, sub);
      const retryCount = again.headers.getString(headerNames.retryCount);
      log.push(
        `${text(again.payload)} #${again.redeliveryCount} retry-count ${retryCount} back, ack -> ${await settle(again, "ack")}`,
      );
    }
    log.push(`  twice -> ${await settle(d, "ack")}`);
  }
  await publisher.publish({ name: topic, payload: bytes("open") });
  const open = await next(connected, sub);
  log.push(`${text(open.payload)} #${open.redeliveryCount} left open at shutdown`);
  await connected.shutdown();
  // A new client of the group, reading to a sentinel: what the first one left behind.
  const second = await connect();
  try {
    const again = await second.subscribe(source);
    const secondPublisher = await second.defaultPublishPolicy().pair(second);
    await secondPublisher.publish({ name: topic, payload: bytes("sentinel") });
    const seen: string[] = [];
    for (;;) {
      const d = await next(second, again);
      await d.ack();
      if (text(d.payload) === "sentinel") break;
      seen.push(text(d.payload));
    }
    log.push(`a new client reads: ${seen.join(", ") || "nothing"} before the sentinel`);
  } finally {
    await second.shutdown();
  }
  return log;
}

// What each mode answers, as the README's table has it.
const expected = {
  tracked: [
    "m0 #1 requeue -> ok",
    "m0 #2 retry-count undefined back, ack -> ok",
    "  twice -> already-settled",
    "m1 #1 later -> unsupported",
    "  then ack -> ok",
    "  twice -> already-settled",
    "m2 #1 drop -> ok",
    "  twice -> already-settled",
    "m3 #1 ack -> ok",
    "  twice -> already-settled",
    "open #1 left open at shutdown",
    "a new client reads: open before the sentinel",
  ],
  auto: [
    "m0 #1 requeue -> unsupported",
    "  then ack -> ok",
    "  twice -> already-settled",
    "m1 #1 later -> unsupported",
    "  then ack -> ok",
    "  twice -> already-settled",
    "m2 #1 drop -> ok",
    "  twice -> already-settled",
    "m3 #1 ack -> ok",
    "  twice -> already-settled",
    "open #1 left open at shutdown",
    // The client committed what it handed over: what was left open does not come back.
    "a new client reads: nothing before the sentinel",
  ],
};

describe("settlement answers: both engines and in-process alike", () => {
  for (const commit of ["tracked", "auto"] as const) {
    it(commit, async () => {
      const answers: Record<string, string[]> = {};
      for (const engine of ["librdkafka", "kafkajs"] as const) {
        const broker = new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS"), engine });
        answers[engine] = await script(
          () => broker.connect(),
          uniqueName(`answers-${engine}`),
          commit,
        );
      }
      const stand = new KafkaBroker({ brokers: "127.0.0.1:9092" });
      answers["in-process"] = await script(
        () =>
          stand.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
        uniqueName("answers-in-process"),
        commit,
      );
      expect(answers.kafkajs, "kafkajs answers as librdkafka").toEqual(answers.librdkafka);
      expect(answers["in-process"], "in-process answers as the cluster").toEqual(
        answers.librdkafka,
      );
      expect(answers.librdkafka).toEqual(expected[commit]);
    }, 120_000);
  }
});
