// A core NATS subject read by a queue group, or by every replica on its own (a fan-out: each
// replica given every message), through the fault proxy, the load published plainly (fire and
// forget, what most core NATS publishers do). Core NATS delivers at most once while
// connected: what a fault catches on its way is gone, by the broker's promise. So the runner marks
// what a fault may take, with signals rather than guesses: before each fault it holds the load
// until every message sent so far was handled (so nothing older is on its way), and from the
// fault's start until every replica answered a probe on a subject of its own after the heal
// (subscribed again, on a live connection) what it publishes is exposed. An exposed message never
// handled is counted apart (removedByFault), every other one must be handled, and none more often
// than it was sent. Under a fan-out all of this is per replica: a replica's exposure is a fault
// that reaches it (one through the proxy reaches every replica, a kill only the one it kills, for
// its downtime and until it answers its probe), and each replica must handle every message
// published outside its own exposure, none more often than it was sent.
import { supportsRequest } from "@ruststream/core";
import { NatsBroker, NatsPublish } from "@ruststream/nats";
import type { Handled, Published } from "../checker.js";
import type { PlannedFault } from "../faults/schedule.js";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { bodyOf, publishPaced } from "../load.js";
import { probeSubject } from "../service/natsCoreService.js";
import { deliveryFailures, NATS_CORE_AGAIN_MS, NATS_CORE_GIVE_UP_MS } from "./natsCoreRequests.js";
import { coreAddresses } from "./natsCoreTarget.js";
import type { FaultKind } from "./scenario.js";
import type { Target } from "./target.js";

/** A probe's wait for its reply. */
const PROBE_TIMEOUT_MS = 1_000;
/** How often the drain before a fault looks at what was handled. */
const DRAIN_POLL_MS = 20;

/**
 * `fanOut`: each replica subscribed on its own (no queue group), so each is held to every message;
 * else the replicas are one queue group, held together to every message.
 */
export async function natsCorePublishTarget(
  key: string,
  replicas: number,
  fanOut: boolean,
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  handled: readonly Handled[],
  log: (line: string) => void,
): Promise<Target> {
  const { direct, serviceAddress } = await coreAddresses(proxy, log);
  const broker = await new NatsBroker({ servers: direct, reconnectWaitMs: 250 }).connect();
  const publisher = await new NatsPublish().pair(broker);
  if (!supportsRequest(publisher)) throw new Error("a core NATS publisher must take requests");
  const sent = new Map<number, number>();
  // Who must handle every message: each replica under a fan-out, else the group as one (index 0).
  const audiences = fanOut ? replicas : 1;
  const audienceOf = (h: Handled): number => (fanOut ? (h.replica ?? -1) : 0);
  const exposed = Array.from({ length: audiences }, () => new Set<number>());
  const failures: string[] = [];
  const undrained = new Set<number>();
  let exposing: readonly number[] = [];
  let held: Promise<void> | undefined;
  let release = (): void => {};
  const publishing = new Set<Promise<unknown>>();
  const seen = Array.from({ length: audiences }, () => new Set<number>());
  let read = 0;
  /** What each audience handled so far. */
  const handledNow = (): readonly ReadonlySet<number>[] => {
    for (; read < handled.length; read++) {
      const h = handled[read] as Handled;
      seen[audienceOf(h)]?.add(h.seq);
    }
    return seen;
  };
  /** Audience `a`'s exposed messages it never handled. */
  const lostTo = (a: number): Set<number> => {
    const done = handledNow()[a] ?? new Set<number>();
    return new Set([...(exposed[a] ?? [])].filter((seq) => !done.has(seq)));
  };

  const publishOne = async (message: Published): Promise<void> => {
    while (held !== undefined) await held;
    for (const a of exposing) exposed[a]?.add(message.seq);
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
    async beforeFault(fault: PlannedFault<FaultKind>) {
      held = new Promise<void>((resolve) => {
        release = resolve;
      });
      await Promise.allSettled([...publishing]);
      // Everything sent so far handled: nothing older is on its way when the fault lands. A
      // message still unhandled after the bound is left to the final count, where it is lost.
      const since = performance.now();
      for (;;) {
        const done = handledNow();
        const waiting = [...sent.keys()].filter((seq) =>
          done.some((got, a) => !got.has(seq) && !exposed[a]?.has(seq)),
        );
        if (waiting.length === 0) break;
        if (performance.now() - since > NATS_CORE_GIVE_UP_MS) {
          for (const seq of waiting) undrained.add(seq);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
      }
      // A kill reaches only the replica it kills when each replica listens on its own; a fault
      // through the proxy reaches every replica, and a kill in a group reaches the group.
      exposing =
        fanOut && fault.kind === "kill"
          ? [fault.replica]
          : Array.from({ length: audiences }, (_, a) => a);
      held = undefined;
      release();
    },
    async afterFault() {
      await Promise.all(Array.from({ length: replicas }, (_, i) => probe(i)));
      exposing = [];
    },
    removedByFault: (replica?: number) => lostTo(fanOut ? (replica ?? -1) : 0),
    verdict() {
      const sends = [...sent.values()].reduce((a, b) => a + b, 0);
      const perAudience = Array.from({ length: audiences }, (_, a) => {
        const own = fanOut ? handled.filter((h) => h.replica === a) : handled;
        const who = fanOut ? `replica ${a}` : "the group";
        return {
          failures: deliveryFailures(sent, own).failures.map((f) => (fanOut ? `${who}: ${f}` : f)),
          note: `${who}: ${exposed[a]?.size ?? 0} published while a fault reaching it was under way (from its start, after the drain before it, until every replica answered its probe after the heal), ${lostTo(a).size} of those never handled: core NATS's at most once, counted apart`,
        };
      });
      const first = [...undrained].sort((a, b) => a - b).slice(0, 10);
      return {
        failures: [...perAudience.flatMap((p) => p.failures), ...failures],
        notes: [
          `${sends} publishes for ${sent.size} messages; every message published outside ${fanOut ? "a replica's" : "the"} exposure must be handled${fanOut ? " by that replica" : ""}`,
          ...perAudience.map((p) => p.note),
          ...(undrained.size === 0
            ? []
            : [
                `the drain before a fault gave up after ${NATS_CORE_GIVE_UP_MS / 1000} s on ${undrained.size} messages (first: ${first.join(", ")}): lost unless handled later`,
              ]),
        ],
      };
    },
    async cleanup() {
      await broker.shutdown();
    },
  };
}
