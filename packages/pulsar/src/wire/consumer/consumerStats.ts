/**
 * What the broker's CONSUMER_STATS answer says about a consumer's subscription, summed over the
 * partitions a consumer reads (the stand-in answers the same for the same steps).
 */
export interface ConsumerStats {
  /**
   * The subscription's `msgBacklog`: entries between its mark-delete position and the topic's end,
   * less those acknowledged out of order. Entries dispatched and not yet acknowledged count, and so
   * do delayed ones (deliverAt) not due yet. An entry is a batch where the producer batched.
   */
  readonly backlog: number;
  /**
   * `unackedMessages`: messages dispatched to this consumer alone and not acknowledged. The
   * broker tracks them on Shared and Key_Shared subscriptions only; on Exclusive and Failover it
   * answers 0 whatever is out.
   */
  readonly unacked: number;
}

/** The counts of several partitions (or a topic and its retry topic) as one. */
export function sumStats(parts: readonly ConsumerStats[]): ConsumerStats {
  let backlog = 0;
  let unacked = 0;
  for (const part of parts) {
    backlog += part.backlog;
    unacked += part.unacked;
  }
  return { backlog, unacked };
}
