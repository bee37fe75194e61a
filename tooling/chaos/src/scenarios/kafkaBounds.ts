// What one Kafka replica may have handled past the group's committed position when a fault lands:
// the at-least-once bound of the Kafka scenarios (README, "What the checker promises").

/**
 * About 4 s of one replica's share of the load (250 a second in the CI profile, 208 in the long
 * one): the cluster fences a dead node after 4 s, and until the client finds the node that took
 * over its group coordinator nothing is committed; a rebalance or a kill then reads it all again.
 * The auto-commit interval itself (1 s) accounts for a quarter of it.
 */
export const KAFKA_TRACKED_IN_FLIGHT = 1_024;

/**
 * The same 4 s: a window's transaction that writes to a partition whose leader died, or whose
 * group or transaction coordinator died, waits for the new leader or fails and is replayed from
 * the last committed position. What the mode promises exactly once is the outputs, checked apart.
 */
export const KAFKA_TRANSACTIONAL_IN_FLIGHT = 1_024;
