import type { ConsumerMessages, ConsumerNotification, JsMsg } from "@nats-io/jetstream";
import type { PullRequest, PullSink, Stored } from "./link.js";

/** What differs between the consumers whose pulls the loop runs. */
export interface PullParts {
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
  /** Each status of the pulls; the loop itself hears the heartbeats (the server takes them). */
  status?(status: ConsumerNotification): void;
}

/** A running loop's pull request, which its consumer may also end with a failure. */
export interface RunningPull extends PullRequest {
  /** Ends the pulls with `error`, which `done` rejects with (nothing while consume() starts). */
  fail(error: Error): void;
}

/**
 * A consumer's pulls, handed to the sink until stopped. The client's consume() asks again once a
 * quarter of its requests arrived, so a request is outstanding while the handlers work; its next
 * request goes out when this loop reads past the messages before it, so waiting for the sink's
 * room holds it back.
 */
export function pullLoop(
  parts: PullParts,
  max: number,
  expiresMs: number,
  sink: PullSink,
): RunningPull {
  let stopped = false;
  let messages: ConsumerMessages | undefined;
  const done = (async () => {
    messages = await parts.consume(max, expiresMs);
    if (stopped) messages.stop();
    else {
      // A heartbeat of the pulls: the server takes them (what a refusal waits to hear).
      const statuses = messages.status();
      void (async () => {
        for await (const status of statuses) {
          if (status.type === "heartbeat") sink.accepted();
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
  return {
    done,
    stop: () => {
      stopped = true;
      messages?.stop();
    },
    fail: (error) => messages?.stop(error),
  };
}
