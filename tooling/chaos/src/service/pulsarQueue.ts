// How much one Pulsar replica may hold unsettled, shared by the service (which sets it) and the
// scenarios (whose duplicate bound is made of it).

/**
 * The consumer's receiver queue: the flow permits the broker may push ahead of what the runtime
 * took. Smaller than the package's default (1000) so the at-least-once bound says something at
 * 10,000 messages.
 */
export const PULSAR_RECEIVER_QUEUE = 32;

/** The runtime's prefetch: deliveries taken from the receiver queue and not yet settled. */
export const PULSAR_PREFETCH = 32;

/**
 * What a kill or a lost connection may make one replica handle twice: what sat in its receiver
 * queue plus what the runtime had taken and not acked (the broker hands both to another consumer).
 */
export const PULSAR_IN_FLIGHT = PULSAR_RECEIVER_QUEUE + PULSAR_PREFETCH;
