import { RustStreamError } from "@ruststream/core";
import type { PublishRequest } from "./link.js";

// What became of a transaction that did not commit whole, in the same words on the real node
// (client/txChannel.ts) and the stand-in: nothing of it, part of it, or not known.

const count = (n: number) => (n === 1 ? "1 message" : `${n} messages`);

/**
 * The server refused the transaction before its commit (a publish to an exchange that does not
 * exist closes the channel, discarding what it had not committed), or its channel was closed before
 * it was sent: none of it took effect.
 */
export function nothingCommitted(
  requests: readonly PublishRequest[],
  reason: string,
  cause?: unknown,
): RustStreamError {
  return new RustStreamError(
    "broker-failure",
    `RabbitMQ did not commit the transaction of ${count(requests.length)} (${reason}): none of it was published; fix the cause (declare the exchange, say) and run the transaction again`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * The commit was sent and no answer came (the connection or the channel closed): RabbitMQ may have
 * committed all of it, some of it (its transactions are not atomic across queues, nor when a node
 * fails during the commit) or none.
 */
export function commitUnanswered(
  requests: readonly PublishRequest[],
  reason: string,
  cause?: unknown,
): RustStreamError {
  return new RustStreamError(
    "broker-failure",
    `the commit of a transaction of ${count(requests.length)} got no answer from RabbitMQ (${reason}): all of it, part of it or none of it may have been published; make its consumers idempotent, or check before running it again`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * The commit returned `mandatory` messages the exchange routed nowhere. RabbitMQ routes a
 * transaction's messages when it commits, and commits the others: they are published.
 */
export function unroutableAtCommit(
  requests: readonly PublishRequest[],
  returned: readonly PublishRequest[],
  reason: string,
): RustStreamError {
  const first = returned[0];
  const where =
    first === undefined
      ? ""
      : `: ${first.exchange === "" ? "the default exchange" : `exchange "${first.exchange}"`} has no binding for routing key "${first.routingKey}"${returned.length > 1 ? ` (and ${returned.length - 1} more)` : ""}`;
  return new RustStreamError(
    "publish-refused",
    `RabbitMQ could route ${count(returned.length)} of the transaction nowhere at its commit (${reason})${where}. The rest of it (${count(requests.length - returned.length)}) was committed and published: RabbitMQ takes nothing back at commit. Declare the queue or binding before the transaction, or publish with mandatory: false to let such messages go`,
  );
}
