import type { SubscriberDescription } from "@ruststream/core";

function duration(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

const keyed: Readonly<Record<NonNullable<SubscriberDescription["key"]>, string>> = {
  partitionKey: "the partition key it was published with",
  partition: "the broker partition it came from",
  function: "a function of the message",
};

/**
 * How a subscriber handles its messages, in a few sentences for the person reading the viewer: the
 * concurrency, and where a failing message goes. The same facts are in `x-ruststream-retry` for a
 * program.
 */
export function handlingProse(subscriber: SubscriberDescription): string {
  const lines: string[] = [];
  const unit =
    subscriber.batch === undefined ? "a message" : `a batch of up to ${subscriber.batch}`;
  if (subscriber.key !== undefined) {
    lines.push(
      `${subscriber.workers} workers, keyed by ${keyed[subscriber.key]}: one message per key at a time, in order.`,
    );
  } else if (subscriber.workers > 1) {
    lines.push(`${subscriber.workers} concurrent workers, each handling ${unit}.`);
  } else {
    lines.push(`Handled one at a time, ${unit} per call.`);
  }
  const deadLetter = subscriber.deadLetter;
  const toDeadLetter =
    deadLetter === undefined
      ? "dropped (no dead letter is declared)"
      : `dead-lettered to ${deadLetter}`;
  const { error, decode, backoff } = subscriber.failure;
  const errorLine: Readonly<Record<typeof error, string>> = {
    retry: `A handler error is retried with a backoff from ${duration(backoff.initialMs)} to ${duration(backoff.maxMs)}, ${subscriber.maxAttempts} deliveries at most, then ${toDeadLetter}.`,
    drop: "A handler error drops the message.",
    "dead-letter": `A handler error has the message ${toDeadLetter} at once.`,
    "fail-fast": "A handler error stops the service, leaving the message unsettled.",
  };
  lines.push(errorLine[error]);
  const decodeLine: Readonly<Record<typeof decode, string>> = {
    drop: "A message that does not decode, or that its schema rejects, is dropped.",
    "dead-letter": `A message that does not decode, or that its schema rejects, is ${toDeadLetter}.`,
    "fail-fast": "A message that does not decode, or that its schema rejects, stops the service.",
  };
  lines.push(decodeLine[decode]);
  return lines.join(" ");
}
