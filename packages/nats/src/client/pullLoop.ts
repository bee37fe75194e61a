import type { ConsumerMessages, ConsumerNotification, JsMsg } from "@nats-io/jetstream";
import { PermissionViolationError } from "@nats-io/transport-node";
import { PullRefused, type PullRequest, type PullSink, type Stored } from "./link.js";
import type { PullRefusals } from "./pullRefusals.js";

/** What differs between the consumers whose pulls the loop runs. */
export interface PullParts {
  /** The stream of the consumer, in a refusal's message and its pull requests' subject. */
  readonly stream: string;
  /** The consumer's name now (an ordered one's changes when the client creates it again). */
  name(): string;
  /**
   * The client's consume() of `max` messages a request, each waiting at the server at most
   * `expiresMs` (and whatever the consumer needs first: an ordered one is made again).
   */
  consume(max: number, expiresMs: number): Promise<ConsumerMessages>;
  /**
   * The subscription's message for one the client read: how it is settled is the consumer's.
   * Undefined: not handed over (the consumer stops the pulls it does not want).
   */
  message(m: JsMsg): Stored | undefined;
  /** A push consumer's messages: the server pushes them, and a missed heartbeat is the sink's. */
  readonly push?: true;
  /** Each status of the pulls; the loop itself hears the heartbeats (the server takes them). */
  status?(status: ConsumerNotification): void;
}

/**
 * A consumer's pulls, handed to the sink until stopped. The client's consume() asks again once a
 * quarter of its requests arrived, so a request is outstanding while the handlers work; its next
 * request goes out when this loop reads past the messages before it, so waiting for the sink's
 * room holds it back. Pulls the server refuses (the account may not publish the pull requests, or
 * not receive the messages) end with `PullRefused`: the client would wait for heartbeats that
 * never come.
 */
export function pullLoop(
  parts: PullParts,
  max: number,
  expiresMs: number,
  sink: PullSink,
  refusals: PullRefusals,
): PullRequest {
  let stopped = false;
  let messages: ConsumerMessages | undefined;
  const loop = (async () => {
    messages = await parts.consume(max, expiresMs);
    if (stopped) messages.stop();
    else {
      // A heartbeat of the pulls: the server takes them (what a refusal waits to hear).
      const statuses = messages.status();
      void (async () => {
        for await (const status of statuses) {
          if (status.type === "heartbeat") sink.accepted();
          // Only a push consumer's: the client's pulls retry on their own when they miss some.
          else if (status.type === "heartbeats_missed" && parts.push === true)
            sink.missed(status.count);
          parts.status?.(status);
        }
      })().catch(() => undefined);
    }
    for await (const m of messages) {
      const stored = parts.message(m);
      if (stored !== undefined) sink.arrived(stored);
      const room = stopped ? undefined : sink.room();
      if (room !== undefined) await room;
    }
  })();
  const unwatch = refusals.watch(
    () => `$JS.API.CONSUMER.MSG.NEXT.${parts.stream}.${parts.name()}`,
    (error) =>
      // Nothing while consume() starts: its first request is refused once it is out.
      messages?.stop(
        new PullRefused(
          `the server refuses the pulls of consumer "${parts.name()}" on "${parts.stream}": ${error.message} (the account's permissions)`,
          error,
        ),
      ),
  );
  const done = loop
    .catch((error: unknown) => {
      // The inbox the messages would come to is refused the same way, as the subscription's; a
      // publish, as a request the consumption needed first (an ordered consumer made again).
      if (error instanceof PermissionViolationError) {
        const what =
          error.operation === "subscription" ? "the inbox its messages come to" : "a request";
        throw new PullRefused(
          `the server refuses consumer "${parts.name()}" on "${parts.stream}" ${what}: ${error.message} (the account's permissions)`,
          error,
        );
      }
      throw error;
    })
    .finally(unwatch);
  return {
    done,
    stop: () => {
      stopped = true;
      messages?.stop();
    },
  };
}
