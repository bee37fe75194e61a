import { MemoryPosition, MemoryQueue, MemoryTopic, type Requester } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import { batchScenarios } from "../src/conformance/batches.js";
import { credentialsScenarios } from "../src/conformance/credentials.js";
import { type AnyConnected, harnessOf } from "../src/conformance/harness.js";
import { inProcessScenarios } from "../src/conformance/inProcess.js";
import { lifecycleScenarios } from "../src/conformance/lifecycle.js";
import { messageShapeScenarios } from "../src/conformance/messageShape.js";
import { requestReplyScenarios } from "../src/conformance/requestReply.js";
import { brokerMovedRetryScenarios, redeliveryAddressScenarios } from "../src/conformance/retry.js";
import { routingScenarios } from "../src/conformance/routing.js";
import { runScenarios, type ScenarioResult } from "../src/conformance/scenario.js";
import { seekingScenarios } from "../src/conformance/seeking.js";
import { settlementScenarios } from "../src/conformance/settlement.js";
import { transactionScenarios } from "../src/conformance/transactions.js";
import { type Faults, faultyBroker } from "./faultyBroker.js";

// Each suite runs against a memory broker with one deliberate fault and must fail the scenario
// that fault breaks; the same scenarios pass on the sound broker (memory.conformance.test.ts).

const timing = { arrivalMs: 400, silenceMs: 40 };

function topicHarness(faults: Faults) {
  const server = faultyBroker(faults);
  return harnessOf({
    makeBroker: () => server,
    makeSource: (name: string) => new MemoryTopic(name, { group: "conformance" }),
    timing,
  });
}

function failed(results: ScenarioResult[]): string[] {
  return results.filter((r) => r.error !== undefined).map((r) => r.name);
}

describe("every suite fails on a broken broker", { timeout: 30_000 }, () => {
  it("routing catches a requeue that acks", async () => {
    const results = await runScenarios(routingScenarios, {
      h: topicHarness({ ackOnRequeue: true }),
      backlog: "missed",
    });
    expect(failed(results)).toEqual(["a requeued delivery comes back"]);
  });

  it("lifecycle catches a publisher that outlives shutdown", async () => {
    const results = await runScenarios(lifecycleScenarios, {
      h: topicHarness({ liveAfterShutdown: true }),
      nackAfterMs: 50,
    });
    expect(failed(results)).toEqual([
      "after shutdown every publisher and subscription rejects with a clear error",
    ]);
  });

  it("settlement catches a shutdown that acks what was abandoned", async () => {
    const results = await runScenarios(
      settlementScenarios,
      topicHarness({ ackAbandonedAtShutdown: true }),
    );
    expect(failed(results)).toEqual([
      "out-of-order settlement loses nothing: unsettled ones come back, in order",
      "a delivery abandoned unsettled comes back to a new client",
    ]);
  });

  it("settlement catches a requeue that acks", async () => {
    const results = await runScenarios(settlementScenarios, topicHarness({ ackOnRequeue: true }));
    expect(failed(results)).toEqual(["ok from a requeue means the same delivery comes back"]);
  });

  it("retry via an address catches a dropped retry-count header", async () => {
    const results = await runScenarios(
      redeliveryAddressScenarios,
      topicHarness({ stripRetryCount: true }),
    );
    expect(failed(results)).toEqual([
      "a copy sent to the redelivery address arrives like a control message",
      "a requeue keeps every header but the retry count byte for byte, and counts each delivery once",
    ]);
  });

  for (const [fault, what] of [
    ["requeueLosesHeader", "a requeue that loses another header"],
    ["requeueRewritesHeader", "a requeue that rewrites another header"],
    ["requeueCountsTwice", "a requeue counted in the header and redeliveryCount both"],
    ["requeueCountsNothing", "a requeue counted nowhere"],
  ] as const) {
    it(`retry via an address catches ${what}`, async () => {
      const results = await runScenarios(
        redeliveryAddressScenarios,
        topicHarness({ [fault]: true }),
      );
      expect(failed(results)).toEqual([
        "a requeue keeps every header but the retry count byte for byte, and counts each delivery once",
      ]);
    });
  }

  it("broker-moved retry catches half a declaration accepted", async () => {
    const server = faultyBroker({ acceptHalfDeclaration: true });
    const h = harnessOf({
      makeBroker: () => server,
      makeSource: (name: string) => new MemoryQueue(name),
      timing,
    });
    const results = await runScenarios(brokerMovedRetryScenarios, { h, attempts: 3 });
    expect(failed(results)).toEqual(["half a retry declaration is refused"]);
  });

  it("broker-moved retry catches a requeue that acks (nothing reaches the dead letter)", async () => {
    const server = faultyBroker({ ackOnRequeue: true });
    const h = harnessOf({
      makeBroker: () => server,
      makeSource: (name: string) => new MemoryQueue(name),
      timing,
    });
    const results = await runScenarios(brokerMovedRetryScenarios, { h, attempts: 3 });
    expect(failed(results)).toEqual([
      "a message that always fails reaches the dead letter after exactly maxAttempts",
    ]);
  });

  it("message shape catches an empty header value dropped", async () => {
    const results = await runScenarios(messageShapeScenarios, {
      h: topicHarness({ dropEmptyHeaders: true }),
      keyed: true,
    });
    expect(failed(results)).toEqual([
      "headers arrive byte for byte or are refused at publish, never rewritten",
    ]);
  });

  it("batches catch a batch larger than asked for", async () => {
    const results = await runScenarios(batchScenarios, topicHarness({ oversizedBatches: true }));
    expect(failed(results)).toEqual(["10 messages in batches of at most 3 keep publish order"]);
  });

  it("seeking catches a seek that does not move", async () => {
    const results = await runScenarios(seekingScenarios, {
      h: topicHarness({ ignoreSeek: true }),
      unknownPosition: () => new MemoryPosition(10n ** 15n),
    });
    expect(failed(results)).toEqual([
      "a seek back replays exactly from the position, a stored position included",
      "a seek forward skips, and new publishes keep arriving",
      "a new subscription that seeks before its first delivery starts there",
      "a seek from another task works",
      "a seek to an unknown position fails and does not move the subscription",
      "a seek after shutdown fails promptly",
    ]);
  });

  it("transactions catch publishes visible before commit", async () => {
    const results = await runScenarios(
      transactionScenarios,
      topicHarness({ leakyTransactions: true }),
    );
    expect(failed(results)).toEqual([
      "nothing is visible before commit, and commit publishes in order",
      "a transaction whose work throws is aborted and publishes nothing",
      "publishing on a transaction that ended is refused",
      "transactions are independent of each other and of direct publishes",
      "after shutdown a stranded transaction fails to commit, and a new one fails",
    ]);
  });

  it("request/reply catches replies matched without their correlation id", async () => {
    const h = topicHarness({ uncorrelatedReplies: true });
    const requester = async (c: AnyConnected) => (await h.publisher(c)) as unknown as Requester;
    const results = await runScenarios(requestReplyScenarios, { h, requester, timeoutMs: 60 });
    expect(failed(results)).toEqual([
      "an unanswered request fails after its timeout, and its late reply resolves nothing else",
      "two concurrent requests answered in reverse order each get their own reply",
    ]);
  });

  it("credentials catch a password shown in the server description", async () => {
    const results = await runScenarios(credentialsScenarios, {
      makeBroker: (secret: string) => faultyBroker({ leakUrl: `memory://svc:${secret}@local` }),
      makeSource: (name: string) => new MemoryTopic(name),
    });
    expect(failed(results)).toEqual([
      "the server description, descriptors and policies carry no credentials",
    ]);
  });

  it("the in-process checks catch a transport that does not count", async () => {
    const h = harnessOf({
      makeBroker: () => faultyBroker({ uncounted: true }),
      makeSource: (name: string) => new MemoryTopic(name, { group: "conformance" }),
      timing,
    });
    const results = await runScenarios(inProcessScenarios, h);
    expect(failed(results)).toEqual([
      "a delivery is counted before inject returns and released once at ack",
      "a requeue stays counted, a drop releases",
      "a delayed redelivery is released at the nack and counted again when due",
    ]);
  });
});
