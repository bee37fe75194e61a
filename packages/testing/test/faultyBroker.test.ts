import {
  MemoryBroker,
  MemoryPosition,
  MemoryQueue,
  MemoryTopic,
  type Requester,
} from "@ruststream/core";
import { describe, expect, it, vi } from "vitest";
import { batchScenarios } from "../src/conformance/batches.js";
import { type Capabilities, notBuilt } from "../src/conformance/capabilities.js";
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
import { type Faults, faultyBroker, makerOf, otherTask } from "./faultyBroker.js";
import { memoryQueueCapabilities, memoryTopicCapabilities } from "./memoryCapabilities.js";

// Every scenario of every suite runs against a memory broker with one deliberate fault and must fail
// where that fault breaks it, and pass where it does not; the same scenarios pass on the sound broker
// (memory.conformance.test.ts). The last test checks that every scenario is broken by some fault.

// Work run by `elsewhere()` is marked, so the `otherTaskLost` fault can lose exactly that work.
vi.mock("../src/conformance/helpers.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../src/conformance/helpers.js")>();
  return {
    ...original,
    elsewhere: <T>(work: () => T | Promise<T>) =>
      original.elsewhere(() => otherTask.run(true, work)),
  };
});

const timing = { arrivalMs: 400, silenceMs: 40 };

function topicHarness(faults: Faults, capabilities: Capabilities = memoryTopicCapabilities) {
  return harnessOf({
    makeBroker: makerOf(faultyBroker(faults), faults),
    makeSource: (name: string) => new MemoryTopic(name, { group: "conformance" }),
    capabilities,
    timing,
  });
}

function queueHarness(faults: Faults, capabilities: Capabilities = memoryQueueCapabilities) {
  return harnessOf({
    makeBroker: makerOf(faultyBroker(faults), faults),
    makeSource: (name: string) => new MemoryQueue(name),
    capabilities,
    timing,
  });
}

type Run = (faults: Faults, capabilities?: Capabilities) => Promise<ScenarioResult[]>;

/** Each suite's scenarios, and how to run them all against a faulty broker. */
const suites: Record<string, { readonly names: readonly string[]; readonly run: Run }> = {
  routing: {
    names: routingScenarios.map((s) => s.name),
    run: (faults, capabilities) => {
      const h = topicHarness(faults, capabilities);
      return runScenarios(routingScenarios, h, h.capabilities);
    },
  },
  lifecycle: {
    names: lifecycleScenarios.map((s) => s.name),
    run: (faults, capabilities) => {
      const h = topicHarness(faults, capabilities);
      return runScenarios(lifecycleScenarios, { h, nackAfterMs: 50 }, h.capabilities);
    },
  },
  settlement: {
    names: settlementScenarios.map((s) => s.name),
    run: (faults, capabilities) => {
      const h = topicHarness(faults, capabilities);
      return runScenarios(settlementScenarios, h, h.capabilities);
    },
  },
  redeliveryAddress: {
    names: redeliveryAddressScenarios.map((s) => s.name),
    run: (faults, capabilities) => {
      const h = topicHarness(faults, capabilities);
      return runScenarios(redeliveryAddressScenarios, { h, fanOut: false }, h.capabilities);
    },
  },
  // Topics without a group, where each subscription gets every message, declared so.
  redeliveryAddressFanOut: {
    names: redeliveryAddressScenarios.map((s) => s.name),
    run: (faults, capabilities = memoryTopicCapabilities) => {
      const h = harnessOf({
        makeBroker: makerOf(faultyBroker(faults), faults),
        makeSource: (name: string) => new MemoryTopic(name),
        capabilities,
        timing,
      });
      return runScenarios(redeliveryAddressScenarios, { h, fanOut: true }, h.capabilities);
    },
  },
  brokerMovedRetry: {
    names: brokerMovedRetryScenarios.map((s) => s.name),
    run: (faults, capabilities) => {
      const h = queueHarness(faults, capabilities);
      return runScenarios(brokerMovedRetryScenarios, { h, attempts: 3 }, h.capabilities);
    },
  },
  messageShape: {
    names: messageShapeScenarios.map((s) => s.name),
    run: (faults, capabilities) => {
      const h = topicHarness(faults, capabilities);
      return runScenarios(messageShapeScenarios, h, h.capabilities);
    },
  },
  batches: {
    names: batchScenarios.map((s) => s.name),
    run: (faults, capabilities) => {
      const h = topicHarness(faults, capabilities);
      return runScenarios(batchScenarios, h, h.capabilities);
    },
  },
  seeking: {
    names: seekingScenarios.map((s) => s.name),
    run: (faults, capabilities) => {
      const h = topicHarness(faults, capabilities);
      const unknownPosition = () => new MemoryPosition(10n ** 15n);
      return runScenarios(seekingScenarios, { h, unknownPosition }, h.capabilities);
    },
  },
  transactions: {
    names: transactionScenarios.map((s) => s.name),
    run: (faults, capabilities) => {
      const h = topicHarness(faults, capabilities);
      return runScenarios(transactionScenarios, h, h.capabilities);
    },
  },
  requestReply: {
    names: requestReplyScenarios.map((s) => s.name),
    run: (faults, capabilities) => {
      const h = topicHarness(faults, capabilities);
      const requester = async (c: AnyConnected) => (await h.publisher(c)) as unknown as Requester;
      return runScenarios(requestReplyScenarios, { h, requester, timeoutMs: 60 }, h.capabilities);
    },
  },
  credentials: {
    names: credentialsScenarios.map((s) => s.name),
    run: (faults) =>
      runScenarios(credentialsScenarios, {
        makeBroker: (secret: string) =>
          faultyBroker(
            faults.leakUrl === undefined
              ? faults
              : { ...faults, leakUrl: faults.leakUrl.replace("SECRET", secret) },
            new MemoryBroker(),
          ),
        makeSource: (name: string) => new MemoryTopic(name),
      }),
  },
  inProcessTransport: {
    names: inProcessScenarios.map((s) => s.name),
    run: (faults, capabilities = memoryTopicCapabilities) => {
      // A new server for each scenario's in-process connection, as TestApp makes one per app.
      const h = harnessOf({
        makeBroker: () => faultyBroker(faults),
        makeSource: (name: string) => new MemoryTopic(name, { group: "conformance" }),
        capabilities,
        timing,
      });
      return runScenarios(inProcessScenarios, h, h.capabilities);
    },
  },
};

type SuiteName = keyof typeof suites;

/** One fault, the suite it runs, and exactly the scenarios it must break there. */
interface Case {
  readonly suite: SuiteName;
  readonly fault: string;
  readonly faults: Faults;
  /** A declaration that differs from the broker's behaviour, in place of the true one. */
  readonly declared?: Capabilities;
  readonly breaks: readonly string[];
  /** The scenarios that declaration leaves out. */
  readonly skips?: readonly string[];
}

const cases: readonly Case[] = [
  // routing
  {
    suite: "routing",
    fault: "a requeue answering unsupported though declared",
    faults: { requeueUnsupported: true },
    breaks: [
      "settle answers and capability marks are the ones declared",
      "a requeued delivery comes back",
    ],
  },
  {
    suite: "routing",
    fault: "a sound broker declared without requeue (it answers ok)",
    faults: {},
    declared: { ...memoryTopicCapabilities, requeue: false },
    breaks: ["settle answers and capability marks are the ones declared"],
    skips: ["a requeued delivery comes back"],
  },
  {
    suite: "routing",
    fault: "a sound broker declaring requeue not built yet (it answers ok)",
    faults: {},
    declared: { ...memoryTopicCapabilities, requeue: notBuilt("owed") },
    breaks: ["settle answers and capability marks are the ones declared"],
    skips: ["a requeued delivery comes back"],
  },
  {
    suite: "routing",
    fault: "a sound broker declared without seek (its subscriptions carry the mark)",
    faults: {},
    declared: { ...memoryTopicCapabilities, seek: false },
    breaks: ["settle answers and capability marks are the ones declared"],
  },
  {
    suite: "routing",
    fault: "neighbouring publishes swapped",
    faults: { swapPairs: true },
    breaks: [
      // The four verbs' messages arrive in another order, and "early" is sent after "late".
      "settle answers and capability marks are the ones declared",
      "delivers in publish order",
      "a message published before subscribing follows the declared backlog",
    ],
  },
  {
    suite: "routing",
    fault: "a backlog replayed though declared missed",
    faults: { replayBacklog: true },
    breaks: ["a message published before subscribing follows the declared backlog"],
  },
  {
    suite: "routing",
    fault: "an ack that requeues",
    faults: { ackRequeues: true },
    breaks: [
      "settle answers and capability marks are the ones declared",
      "an acked delivery does not come back",
    ],
  },
  {
    suite: "routing",
    fault: "a requeue that acks",
    faults: { ackOnRequeue: true },
    breaks: [
      "settle answers and capability marks are the ones declared",
      "a requeued delivery comes back",
    ],
  },
  {
    suite: "routing",
    fault: "a drop that requeues",
    faults: { dropRequeues: true },
    breaks: [
      "settle answers and capability marks are the ones declared",
      "a dropped delivery stays gone",
    ],
  },
  {
    suite: "routing",
    fault: "headers outside the framework's own dropped",
    faults: { onlyFrameworkHeaders: true },
    breaks: ["headers arrive"],
  },
  // lifecycle
  {
    suite: "lifecycle",
    fault: "a constructor that starts a timer",
    faults: { ioInConstructor: true },
    breaks: ["the constructor is synchronous and starts no I/O"],
  },
  {
    suite: "lifecycle",
    fault: "work from another task lost",
    faults: { otherTaskLost: true },
    breaks: [
      "subscribe and publish from other tasks",
      "settle from other tasks: a requeue comes back, a drop stays gone",
    ],
  },
  {
    suite: "lifecycle",
    fault: "a second pull that queues behind the waiting one",
    faults: { secondPullQueues: true },
    breaks: [
      "a second pull while one waits is refused, and the waiting one still gets the message",
    ],
  },
  {
    suite: "lifecycle",
    fault: "a requeue that acks",
    faults: { ackOnRequeue: true },
    breaks: ["settle from other tasks: a requeue comes back, a drop stays gone"],
  },
  {
    suite: "lifecycle",
    fault: "nackAfter redelivering at once",
    faults: { nackAfterEarly: true },
    breaks: ["nackAfter redelivers no sooner than its delay"],
  },
  {
    suite: "lifecycle",
    fault: "a shutdown that hangs on a subscription never pulled",
    faults: { shutdownWaitsForFirstPull: true },
    breaks: ["shutdown is prompt, and a second one is harmless"],
  },
  {
    suite: "lifecycle",
    fault: "a second shutdown that throws",
    faults: { secondShutdownFails: true },
    breaks: ["shutdown is prompt, and a second one is harmless"],
  },
  {
    suite: "lifecycle",
    fault: "a publisher that outlives shutdown",
    faults: { liveAfterShutdown: true },
    breaks: ["after shutdown every publisher and subscription rejects with a clear error"],
  },
  {
    suite: "lifecycle",
    fault: "an ack after the subscription closed lost",
    faults: { ackAfterCloseLost: true },
    breaks: [
      "a handler running at a graceful stop acks after the close: a new app reads it no more, and misses nothing",
    ],
  },
  // settlement
  {
    suite: "settlement",
    fault: "an ack kept only by the client that made it",
    faults: { ackNotDurable: true },
    // The gap scenario tolerates the acked third coming back, as a log committing a prefix does.
    breaks: [
      "an acked delivery never comes back, not even to a new client",
      "ok from a requeue means the same delivery comes back",
    ],
  },
  {
    suite: "settlement",
    fault: "a drop that requeues",
    faults: { dropRequeues: true },
    breaks: ["a dropped delivery never comes back, not even to a new client"],
  },
  {
    suite: "settlement",
    fault: "a shutdown that acks what was abandoned",
    faults: { ackAbandonedAtShutdown: true },
    breaks: [
      "out-of-order settlement loses nothing: unsettled ones come back, in order",
      "a delivery abandoned unsettled comes back to a new client exactly when durable is declared",
    ],
  },
  {
    suite: "settlement",
    fault: "each client in a consumer group of its own (what was left open is lost)",
    faults: { groupPerClient: true },
    breaks: [
      "out-of-order settlement loses nothing: unsettled ones come back, in order",
      "a delivery abandoned unsettled comes back to a new client exactly when durable is declared",
    ],
  },
  {
    suite: "settlement",
    fault: "a sound broker declared not durable (a new client gets what was left open)",
    faults: {},
    declared: { ...memoryTopicCapabilities, durable: false },
    breaks: [
      "a delivery abandoned unsettled comes back to a new client exactly when durable is declared",
    ],
    skips: [
      "an acked delivery never comes back, not even to a new client",
      "a dropped delivery never comes back, not even to a new client",
      "ok from a requeue means the same delivery comes back",
      "out-of-order settlement loses nothing: unsettled ones come back, in order",
    ],
  },
  {
    suite: "settlement",
    fault: "a requeue that acks",
    faults: { ackOnRequeue: true },
    breaks: ["ok from a requeue means the same delivery comes back"],
  },
  // retry via a redelivery address
  {
    suite: "redeliveryAddress",
    fault: "a dropped retry-count header",
    faults: { stripRetryCount: true },
    breaks: [
      "a copy sent to the redelivery address arrives like a control message",
      "a requeue keeps every header but the retry count byte for byte, and counts each delivery once",
    ],
  },
  ...(
    [
      ["requeueLosesHeader", "a requeue that loses another header"],
      ["requeueRewritesHeader", "a requeue that rewrites another header"],
      ["requeueCountsTwice", "a requeue counted in the header and redeliveryCount both"],
      ["requeueCountsNothing", "a requeue counted nowhere"],
    ] as const
  ).map(
    ([fault, what]): Case => ({
      suite: "redeliveryAddress",
      fault: what,
      faults: { [fault]: true },
      breaks: [
        "a requeue keeps every header but the retry count byte for byte, and counts each delivery once",
      ],
    }),
  ),
  {
    suite: "redeliveryAddress",
    fault: "a copy sent twice, over a link slower than a quiet spell",
    faults: { copiesSentTwice: true, deliveryLagMs: 100 },
    breaks: [
      "a copy sent to the redelivery address arrives like a control message",
      // Its message carries a retry count from the start, so it arrives twice as well.
      "a requeue keeps every header but the retry count byte for byte, and counts each delivery once",
    ],
  },
  {
    suite: "redeliveryAddressFanOut",
    fault: "subscriptions sharing one group where each was to get every message",
    faults: { oneGroup: true },
    breaks: ["a copy sent to the redelivery address arrives like a control message"],
  },
  {
    suite: "redeliveryAddressFanOut",
    fault: "a copy sent twice, over a link slower than a quiet spell",
    faults: { copiesSentTwice: true, deliveryLagMs: 100 },
    breaks: [
      "a copy sent to the redelivery address arrives like a control message",
      "a requeue keeps every header but the retry count byte for byte, and counts each delivery once",
    ],
  },
  // broker-moved retry
  {
    suite: "brokerMovedRetry",
    fault: "half a declaration accepted",
    faults: { acceptHalfDeclaration: true },
    breaks: ["half a retry declaration is refused"],
  },
  {
    suite: "brokerMovedRetry",
    fault: "a requeue that acks (nothing reaches the dead letter)",
    faults: { ackOnRequeue: true },
    breaks: ["a message that always fails reaches the dead letter after exactly maxAttempts"],
  },
  {
    suite: "brokerMovedRetry",
    fault:
      "a message moved at its last attempt and delivered again, over a link slower than a quiet spell",
    faults: { movedYetRedelivered: true, deliveryLagMs: 100 },
    breaks: ["a message that always fails reaches the dead letter after exactly maxAttempts"],
  },
  {
    suite: "brokerMovedRetry",
    fault: "a message moved to the dead letter twice, over a link slower than a quiet spell",
    faults: { deadLetteredTwice: true, deliveryLagMs: 100 },
    breaks: ["a message that always fails reaches the dead letter after exactly maxAttempts"],
  },
  // message shape
  {
    suite: "messageShape",
    fault: "concurrent publishes sharing one slot",
    faults: { concurrentPublishLost: true },
    breaks: ["32 messages published at once all arrive"],
  },
  {
    suite: "messageShape",
    fault: "an empty header value dropped",
    faults: { dropEmptyHeaders: true },
    breaks: ["headers arrive byte for byte or are refused at publish, never rewritten"],
  },
  {
    suite: "messageShape",
    fault: "an empty header value refused at publish and sent all the same",
    faults: { refusedYetSent: true },
    breaks: ["headers arrive byte for byte or are refused at publish, never rewritten"],
  },
  {
    suite: "messageShape",
    fault: "the partition key dropped",
    faults: { losePartitionKey: true },
    breaks: [
      "a delivery reports the partition key it was published with exactly when partitionKey is declared, an unkeyed one none",
      "keyed messages report their key and keep their order per key (3 keys x 8)",
    ],
  },
  {
    suite: "messageShape",
    fault: "a sound broker declared without partitionKey (its deliveries report the key)",
    faults: {},
    declared: { ...memoryTopicCapabilities, partitionKey: false },
    breaks: [
      "a delivery reports the partition key it was published with exactly when partitionKey is declared, an unkeyed one none",
    ],
    skips: ["keyed messages report their key and keep their order per key (3 keys x 8)"],
  },
  {
    suite: "messageShape",
    fault: "neighbouring publishes of one key swapped",
    faults: { swapPerKey: true },
    breaks: ["keyed messages report their key and keep their order per key (3 keys x 8)"],
  },
  // batches
  {
    suite: "batches",
    fault: "a batch larger than asked for",
    faults: { oversizedBatches: true },
    breaks: ["10 messages in batches of at most 3 keep publish order"],
  },
  {
    suite: "batches",
    fault: "one element's settle applied to its whole batch",
    faults: { batchSettlesTogether: true },
    breaks: ["each element of a batch settles on its own"],
  },
  {
    suite: "batches",
    fault: "work from another task lost",
    faults: { otherTaskLost: true },
    breaks: ["a batch settled from another task requeues in order"],
  },
  // seeking
  {
    suite: "seeking",
    fault: "a seek that does not move",
    faults: { ignoreSeek: true },
    breaks: [
      "a seek back replays exactly from the position, a stored position included",
      "a seek forward skips, and new publishes keep arriving",
      "a new subscription that seeks before its first delivery starts there",
      "a seek from another task works",
      "a seek to an unknown position fails and does not move the subscription",
      "a seek after shutdown fails promptly",
    ],
  },
  {
    suite: "seeking",
    fault: "work from another task lost",
    faults: { otherTaskLost: true },
    breaks: ["a seek from another task works"],
  },
  // transactions
  {
    suite: "transactions",
    fault: "publishes visible before commit",
    faults: { leakyTransactions: true },
    breaks: [
      "nothing is visible before commit, and commit publishes in order",
      "a transaction whose work throws is aborted and publishes nothing",
      "publishing on a transaction that ended is refused",
      "transactions are independent of each other and of direct publishes",
      "after shutdown a stranded transaction fails to commit, and a new one fails",
    ],
  },
  {
    suite: "transactions",
    fault: "publishes visible before commit, over a link slower than a quiet spell",
    faults: { leakyTransactions: true, deliveryLagMs: 100 },
    breaks: [
      "nothing is visible before commit, and commit publishes in order",
      "a transaction whose work throws is aborted and publishes nothing",
      "publishing on a transaction that ended is refused",
      "transactions are independent of each other and of direct publishes",
      "after shutdown a stranded transaction fails to commit, and a new one fails",
    ],
  },
  {
    suite: "transactions",
    fault: "work from another task lost",
    faults: { otherTaskLost: true },
    breaks: ["work that continues in another task still commits"],
  },
  // request/reply
  {
    suite: "requestReply",
    fault: "replies matched without their correlation id",
    faults: { uncorrelatedReplies: true },
    breaks: [
      "an unanswered request fails after its timeout, and its late reply resolves nothing else",
      "two concurrent requests answered in reverse order each get their own reply",
      "a request that takes several replies gets each one before the last, in order, then resolves with the last",
    ],
  },
  {
    suite: "requestReply",
    fault: "a reply-to nobody listens on",
    faults: { unroutableReplyTo: true },
    breaks: [
      "a request carries a usable reply-to and gets its correlated reply",
      "requests from another task, then from this one, both resolve",
      "an unanswered request fails after its timeout, and its late reply resolves nothing else",
      "two concurrent requests answered in reverse order each get their own reply",
      "a request that takes several replies gets each one before the last, in order, then resolves with the last",
    ],
  },
  {
    suite: "requestReply",
    fault: "work from another task lost",
    faults: { otherTaskLost: true },
    breaks: ["requests from another task, then from this one, both resolve"],
  },
  {
    suite: "requestReply",
    fault: "a request that gives up before its timeout",
    faults: { requestTimesOutEarly: true },
    breaks: [
      "an unanswered request fails after its timeout, and its late reply resolves nothing else",
    ],
  },
  {
    suite: "requestReply",
    fault: "a request after shutdown that waits out its timeout",
    faults: { requestAfterShutdownWaits: true },
    breaks: ["a request after shutdown fails promptly"],
  },
  // credentials
  {
    suite: "credentials",
    fault: "a password shown in the server description",
    faults: { leakUrl: "memory://svc:SECRET@local" },
    breaks: ["the server description, descriptors and policies carry no credentials"],
  },
  // in-process transport
  {
    suite: "inProcessTransport",
    fault: "a transport that does not count",
    faults: { uncounted: true },
    breaks: [
      "a delivery is counted before inject returns and released once at ack",
      "a requeue stays counted, a drop releases",
      "a delayed redelivery is released at the nack and counted again when due",
      // Closing its subscription releases what was never counted: the coordinator refuses that.
      "published() lists every publish and injection, in order, with headers",
    ],
  },
  {
    suite: "inProcessTransport",
    fault: "an injection nobody subscribes to counted",
    faults: { countsUnsubscribed: true },
    breaks: [
      "nothing is counted for a name nobody subscribes to",
      // The refused injection after shutdown names nobody's subscription either, and is counted.
      "inject() after shutdown rejects closed and delivers nothing",
    ],
  },
  {
    suite: "inProcessTransport",
    fault: "nackAfter redelivering at once",
    faults: { nackAfterEarly: true },
    breaks: ["a delayed redelivery is released at the nack and counted again when due"],
  },
  {
    suite: "inProcessTransport",
    fault: "published() leaving out injections",
    faults: { publishedOmitsInjected: true },
    breaks: ["published() lists every publish and injection, in order, with headers"],
  },
  {
    suite: "inProcessTransport",
    fault: "inject() accepted after shutdown",
    faults: { injectsAfterShutdown: true },
    breaks: ["inject() after shutdown rejects closed and delivers nothing"],
  },
];

function failed(results: readonly ScenarioResult[]): string[] {
  return results.filter((r) => r.error !== undefined).map((r) => r.name);
}

describe(
  "every scenario fails on a broker with the fault that breaks it",
  { timeout: 60_000 },
  () => {
    for (const c of cases) {
      it(`${c.suite} catches ${c.fault}`, async () => {
        const results = await suites[c.suite]!.run(c.faults, c.declared);
        expect(results.map((r) => r.name)).toEqual(suites[c.suite]!.names);
        const skipped = results.filter((r) => r.skipped !== undefined).map((r) => r.name);
        expect(skipped).toEqual(c.skips ?? []);
        expect(failed(results)).toEqual(c.breaks);
      });
    }

    it("every scenario of every suite is broken by at least one fault", () => {
      const unbroken = Object.entries(suites).flatMap(([suite, { names }]) =>
        names
          .filter((name) => !cases.some((c) => c.suite === suite && c.breaks.includes(name)))
          .map((name) => `${suite}: ${name}`),
      );
      expect(unbroken).toEqual([]);
    });
  },
);
