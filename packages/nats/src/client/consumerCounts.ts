import type { ConsumerInfo } from "@nats-io/jetstream";
import { RustStreamError } from "@ruststream/core";
import { CONSUMER_NOT_FOUND, isApiError } from "./apiErrors.js";
import { type ConsumerCounts, consumerGone, countsWhileAway } from "./link.js";

/**
 * A consumer's counts from one consumer info request (`info`), or a refusal that names the check:
 * at once while the connection is away (`away` says why), and when the server answers that it has
 * no such consumer.
 */
export async function consumerCounts(
  stream: string,
  consumer: string,
  away: string | undefined,
  info: () => Promise<Pick<ConsumerInfo, "num_pending" | "num_ack_pending">>,
): Promise<ConsumerCounts> {
  if (away !== undefined) throw countsWhileAway(stream, consumer, away);
  try {
    const answer = await info();
    return { undelivered: answer.num_pending, unacknowledged: answer.num_ack_pending };
  } catch (error) {
    if (isApiError(error, CONSUMER_NOT_FOUND)) throw consumerGone(stream, consumer, error);
    throw new RustStreamError(
      "broker-failure",
      `the consumer info of "${consumer}" on the JetStream stream "${stream}" failed: ${error instanceof Error ? error.message : String(error)} (nats consumer info ${stream} ${consumer})`,
      { cause: error },
    );
  }
}
