import {
  type Consumer,
  type JetStreamClient,
  DeliverPolicy as JsDeliverPolicy,
} from "@nats-io/jetstream";
import type { DeliverPolicy } from "../sources.js";
import { consumerCounts } from "./consumerCounts.js";
import type { ConsumerLink, ConsumerSpec, PullRequest } from "./link.js";
import { pullLoop } from "./pullLoop.js";
import type { PullRefusals } from "./pullRefusals.js";
import { UnackedStored } from "./unackedStored.js";

/**
 * Creates an ordered consumer as the client makes one (`js.consumers.get(stream, options)` with no
 * name): the client checks each message's delivery sequence and, on a gap, a lost heartbeat or a
 * consumer the server no longer has, creates it again after the last message it read. Before the
 * first, it creates it again from its starting sequence: the stream's first message unless the
 * start was a sequence. So a start the server places (`new`, `last`, a `{ time }`) is placed by a
 * consumer made for that alone, deleted once its info says where it starts, and the client is given
 * that sequence. `last-per-subject` (a message a subject) is no one sequence: before the first read,
 * a message from another consumer than the one the pulls began with comes from the client's
 * recreation, from the stream's first message, so the pulls leave it, stop, and start again from a
 * consumer of that start made then (a subject stored to in between hands over its newest message
 * only). Pulls the server refuses end as a named consumer's do (`pullLoop`). The creations at subscribe go through `retried` (the link's API retries: a cluster without
 * a leader for a moment); one whose answer timed out is left to the server's inactive threshold,
 * as nobody pulls from it.
 */
export async function orderedConsumer(
  js: JetStreamClient,
  retried: (create: () => Promise<Consumer>) => Promise<Consumer>,
  spec: ConsumerSpec,
  refusals: PullRefusals,
  away: () => string | undefined,
): Promise<ConsumerLink> {
  const create = (start: DeliverPolicy) =>
    js.consumers.get(spec.stream, {
      filter_subjects: [...spec.subjects],
      ...orderedStart(start),
    });
  const start = await carried(spec.startAt ?? spec.settings.deliver, (policy) =>
    retried(() => create(policy)),
  );
  let current = await retried(() => create(start));
  let name = (await current.info(true)).name;
  /** The last stream sequence handed over: a later pull's consumer starts after it. */
  let read: bigint | undefined;
  /** The client's ordered consumer runs one consume(); a later pull needs a consumer of its own. */
  let consumed = false;
  return {
    get name() {
      return name;
    },
    // The client's consumer of the moment (it makes a new one on a gap): its info, from the server.
    counts: () => consumerCounts(spec.stream, name, away(), () => current.info()),
    pull(max, expiresMs, sink): PullRequest {
      let stopped = false;
      let request: PullRequest | undefined;
      const run = async (): Promise<void> => {
        /** The consumer this run's consume() began with. */
        let from: string | undefined;
        /**
         * A `last-per-subject` start the client created again from the stream's first message (its
         * recreation copies the consumer's settings with `by_start_sequence` in place of the
         * policy, from the sequence after the last it read).
         */
        let strayed = false;
        const running = pullLoop(
          {
            stream: spec.stream,
            // The client's name for it: its pull requests go to the consumer it created last.
            name: () => name,
            consume: async (max_messages, expires) => {
              if (consumed) {
                await current.delete().catch(() => undefined);
                current = await create(read === undefined ? start : { sequence: read + 1n });
                name = (await current.info(true)).name;
              }
              consumed = true;
              from = (await current.info(true)).name;
              // No abort_on_missing_resource: a consumer deleted under it is the client's to
              // create again.
              return current.consume({ max_messages, expires });
            },
            message: (m) => {
              if (read === undefined && start === "last-per-subject" && m.info.consumer !== from) {
                if (!strayed) running.stop();
                strayed = true;
                return undefined;
              }
              read = BigInt(m.info.streamSequence);
              return new UnackedStored(m);
            },
            status: (status) => {
              if (status.type === "ordered_consumer_recreated") name = status.name;
            },
          },
          max,
          expiresMs,
          sink,
          refusals,
        );
        request = running;
        await running.done;
        if (strayed && !stopped) await run();
      };
      const done = run();
      return {
        done,
        stop: () => {
          stopped = true;
          request?.stop();
        },
      };
    },
    // The server holds nothing for it: what was read is read.
    async giveBack() {},
    // The client creates it again when the server no longer has it.
    async exists() {
      return true;
    },
    async close() {
      await current.delete().catch(() => undefined);
    },
  };
}

/** Where the client's ordered consumer starts, in its options' terms. */
function orderedStart(start: DeliverPolicy) {
  if (start === "all") return { deliver_policy: JsDeliverPolicy.All };
  if (start === "new") return { deliver_policy: JsDeliverPolicy.New };
  if (start === "last") return { deliver_policy: JsDeliverPolicy.Last };
  if (start === "last-per-subject") return { deliver_policy: JsDeliverPolicy.LastPerSubject };
  if ("sequence" in start) return { opt_start_seq: Number(start.sequence) };
  return { opt_start_time: start.time.toISOString() };
}

/**
 * The start as the client carries it across a recreation before the first message read: `"all"`
 * and a sequence as they are; `"new"`, `"last"` and a `{ time }` start as the sequence the server
 * places a consumer of that start at (its info's delivered stream sequence is the one before). A
 * `{ time }` start given as it is would also stop every recreation, before a read or after: the
 * client copies the first consumer's settings, whose start time the server refuses beside the start
 * sequence it sets.
 * `"last-per-subject"` stands for a message a subject, not a run from one sequence: as it is, the
 * pulls keeping it (see `orderedConsumer`).
 */
async function carried(
  start: DeliverPolicy,
  create: (start: DeliverPolicy) => Promise<Consumer>,
): Promise<DeliverPolicy> {
  if (start === "all" || start === "last-per-subject") return start;
  if (typeof start === "object" && "sequence" in start) return start;
  const placed = await create(start);
  const { delivered } = await placed.info(true);
  await placed.delete().catch(() => undefined);
  return { sequence: BigInt(delivered.stream_seq) + 1n };
}
