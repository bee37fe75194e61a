// The RabbitMQ scenarios of a classic queue and a stream queue (the quorum queue's are in
// catalog.ts), on the one node of tooling/brokers through the fault proxy.
import { RABBIT_PREFETCH } from "../service/brokerBounds.js";
import { RABBIT_STREAM_CREDIT } from "../service/rabbitmqStream.js";
import { retryPlan } from "./retryPlan.js";
import type { Scenario } from "./scenario.js";

/**
 * What a fault makes the stream's one replica read again: a kill resumes at the lowest message the
 * runtime held a copy of (a delayed retry, 1.5 s), a cut at the lowest unsettled offset, the same
 * one; so the consumer's credit plus what the load brings while a copy waits (500 a second).
 */
const STREAM_RETRY_REREAD = RABBIT_STREAM_CREDIT + (retryPlan.delayMs * 500) / 1_000;

export const rabbitmqQueueScenarios: readonly Scenario[] = [
  {
    name: "rabbitmq-classic-proxy",
    description:
      "a durable classic queue with a single active consumer, consumed by two replicas through the fault proxy: cut, stall, latency, and SIGKILL of a replica; what a lost channel held unacked goes back to the queue's head and is delivered again, to the next active consumer; each key in order",
    broker: "rabbitmq-classic",
    replicas: 2,
    faults: ["cut", "stall", "latency", "kill"],
    // One consumer at a time, one handling at a time, and a lost channel's messages back at the head.
    orderPerKey: true,
    inFlightPerReplica: RABBIT_PREFETCH,
    ci: true,
  },
  {
    name: "rabbitmq-classic-retry",
    description:
      "the retry and dead-letter path on a durable classic queue with a single active consumer: a classic queue counts nothing, so the runtime keeps the cap (a counted copy republished to the queue, then the original acked) and writes the dead letter, a delay a copy through the package's wait queue, under SIGKILL and a cut connection",
    broker: "rabbitmq-classic",
    replicas: 2,
    faults: ["kill", "cut"],
    // A retry copy goes to the queue's tail, behind later messages of its key.
    orderPerKey: false,
    inFlightPerReplica: RABBIT_PREFETCH,
    retry: retryPlan,
    // The runtime publishes the dead letter, then acks the original: a kill or cut between the two
    // brings the original back past its cap, dead-lettered again (the package's README: at least
    // once, as for the runtime's own dead letters), at most the one replica's unacked deliveries.
    deadLettersTwicePerFault: RABBIT_PREFETCH,
    // The attempts are the retry count the runtime's copies carry: a redelivery after a fault
    // comes with the count it had.
    capCountsHandlerRunsOnly: true,
    ci: true,
  },
  {
    name: "rabbitmq-stream-kill",
    description:
      "a stream queue read by one replica from an offset it keeps itself (the last handled, in a file, written over itself at each handling), the replica SIGKILLed and started again from the offset after the one it stored; each key in order",
    broker: "rabbitmq-stream",
    // Every AMQP consumer of a stream reads all of it: there is no group to share it in.
    replicas: 1,
    faults: ["kill"],
    orderPerKey: true,
    // A kill re-reads at most the one handling (one at a time) whose line was printed and whose
    // offset was not stored yet.
    inFlightPerReplica: 1,
    ci: true,
  },
  {
    name: "rabbitmq-stream-proxy",
    description:
      "a stream queue read by one replica from an offset it keeps itself (the last handled, in a file), through the fault proxy: cut, stall, latency, and SIGKILL of the replica, which starts again from the offset after the one it stored; each key in order",
    broker: "rabbitmq-stream",
    replicas: 1,
    faults: ["cut", "stall", "latency", "kill"],
    orderPerKey: true,
    // The consumer's credit: what a reconnect delivers again (the package consumes again from the
    // first offset it handed over and that was not settled), and, with the SIGKILLs, at most the
    // one message in work.
    inFlightPerReplica: RABBIT_STREAM_CREDIT,
    ci: true,
  },
  {
    name: "rabbitmq-stream-retry",
    description:
      "the retry and dead-letter path on the stream of rabbitmq-stream-proxy, read from an offset the service stores itself: a stream cannot requeue or delay, so the runtime appends a counted copy, holds a delayed one in memory (the original unsettled) until its delay is over, and writes the dead letter (a classic queue); the stored offset stays at the lowest message whose copy or dead letter is not published yet, under SIGKILL of the replica and a cut connection",
    broker: "rabbitmq-stream",
    replicas: 1,
    faults: ["kill", "cut"],
    // A retry copy is appended at the stream's tail, behind later messages of its key.
    orderPerKey: false,
    inFlightPerReplica: STREAM_RETRY_REREAD,
    retry: retryPlan,
    // A fault's re-read brings back the failing messages in it, whose dead letters were written:
    // written again (the runtime's dead letters are at least once).
    deadLettersTwicePerFault: Math.ceil(STREAM_RETRY_REREAD / retryPlan.failEvery),
    // The attempts are the retry count the runtime's copies carry; a re-read original starts again.
    capCountsHandlerRunsOnly: true,
    ci: "75-78 s of wall time (seeds 1-2, load 3-7): a delayed retry's original, open for its delay, holds back the acks of every later delivery, so the one replica's credit fills and it reads about 130 a second (README, Found so far); far past the ~40 s a CI scenario may take",
  },
];
