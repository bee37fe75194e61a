// A core NATS subject read by a queue group through the fault proxy, the load published plainly
// (fire and forget, what most core NATS publishers do). Core NATS delivers at most once while
// connected: what a fault catches on its way is gone, by the broker's promise. So the runner marks
// what a fault may take, with signals rather than guesses: before each fault it holds the load
// until every message sent so far was handled (so nothing older is on its way), and from the
// fault's start until every replica answered a probe on a subject of its own after the heal
// (subscribed again, on a live connection) what it publishes is exposed. An exposed message never
// handled is counted apart (removedByFault), every other one must be handled, and none more often
// than it was sent.
import { supportsRequest } from "@ruststream/core";
import { NatsBroker, NatsPublish } from "@ruststream/nats";
import type { Handled, Published } from "../checker.js";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { bodyOf, publishPaced } from "../load.js";
import { probeSubject } from "../service/natsCoreService.js";
import { deliveryFailures, NATS_CORE_AGAIN_MS, NATS_CORE_GIVE_UP_MS } from "./natsCoreRequests.js";
import { coreAddresses } from "./natsCoreTarget.js";
import type { Target } from "./target.js";

/** A probe's wait for its reply. */
const PROBE_TIMEOUT_MS = 1_000;
/** How often the drain before a fault looks at what was handled. */
const DRAIN_POLL_MS = 20;

export async function natsCorePublishTarget(
  key: string,
  replicas: number,
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  handled: readonly Handled[],
  log: (line: string) => void,
): Promise<Target> {
  const { direct, serviceAddress } = await coreAddresses(proxy, log);
  const broker = await new NatsBroker({ servers: direct, reconnectWaitMs: 250 }).connect();
  const publisher = await new NatsPublish().pair(broker);
  if (!supportsRequest(publisher)) throw new Error("a core NATS publisher must take requests");
  const sent = new Map<number, number>();
  const exposed = new Set<number>();
  const failures: string[] = [];
  const undrained: number[] = [];
  let exposing = false;
  let held: Promise<void> | undefined;
  let release = (): void => {};
  const publishing = new Set<Promise<unknown>>();
  const seen = new Set<number>();
  let read = 0;
  const handledNow = (): ReadonlySet<number> => {
    for (; read < handled.length; read++) seen.add((handled[read] as Handled).seq);
    return seen;
  };

  const publishOne = async (message: Published): Promise<void> => {
    while (held !== undefined) await held;
    if (exposing) exposed.add(message.seq);
    sent.set(message.seq, (sent.get(message.seq) ?? 0) + 1);
    const done = publisher.publish({
      name: key,
      payload: bodyOf(message),
      partitionKey: message.key,
    });
    publishing.add(done);
    try {
      await done;
    } finally {
      publishing.delete(done);
    }
  };

  /** Until replica `i` answers its probe: subscribed again, on a live connection. */
  const probe = async (i: number): Promise<void> => {
    const since = performance.now();
    for (;;) {
      try {
        await publisher.request(
          { name: probeSubject(key, i), payload: new TextEncoder().encode("{}") },
          { timeoutMs: PROBE_TIMEOUT_MS },
        );
        return;
      } catch {
        if (performance.now() - since > NATS_CORE_GIVE_UP_MS) {
          failures.push(
            `replica ${i} answered no probe for ${NATS_CORE_GIVE_UP_MS / 1000} s after a fault healed`,
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, NATS_CORE_AGAIN_MS));
      }
    }
  };

  return {
    serviceAddress,
    publishBeforeStart: false,
    async publishAll(load, windowMs, paceLog) {
      // A publish held by the drain before a fault is not sent again: only one the server never
      // took is (after twice the give-up time, which a publish on the direct connection never waits).
      await publishPaced(load, publishOne, windowMs, paceLog, NATS_CORE_GIVE_UP_MS * 2);
    },
    restartBroker: undefined,
    async beforeFault() {
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await Promise.allSettled([...publishing]);
      // Everything sent so far handled: nothing older is on its way when the fault lands. A
      // message still unhandled after the bound is left to the final count, where it is lost.
      const since = performance.now();
      for (;;) {
        const done = handledNow();
        const waiting = [...sent.keys()].filter((seq) => !done.has(seq) && !exposed.has(seq));
        if (waiting.length === 0) break;
        if (performance.now() - since > NATS_CORE_GIVE_UP_MS) {
          undrained.push(...waiting);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
      }
      exposing = true;
      held = undefined;
      release();
    },
    async afterFault() {
      await Promise.all(Array.from({ length: replicas }, (_, i) => probe(i)));
      exposing = false;
    },
    removedByFault: () => {
      const done = handledNow();
      return new Set([...exposed].filter((seq) => !done.has(seq)));
    },
    verdict() {
      const done = handledNow();
      const delivered = deliveryFailures(sent, handled);
      const exposedLost = [...exposed].filter((seq) => !done.has(seq)).length;
      const sends = [...sent.values()].reduce((a, b) => a + b, 0);
      return {
        failures: [...delivered.failures, ...failures],
        notes: [
          `${sends} publishes for ${sent.size} messages; ${exposed.size} published while a fault was under way (from its start, after the drain before it, until every replica answered its probe after the heal), ${exposedLost} of those never handled: core NATS's at most once, counted apart; every other message must be handled`,
          ...(undrained.length === 0
            ? []
            : [
                `the drain before a fault gave up after ${NATS_CORE_GIVE_UP_MS / 1000} s on ${undrained.length} messages (first: ${undrained.slice(0, 10).join(", ")}): lost unless handled later`,
              ]),
        ],
      };
    },
    async cleanup() {
      await broker.shutdown();
    },
  };
}
