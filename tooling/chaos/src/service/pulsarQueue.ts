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

/**
 * What a hard restart of the broker may make one replica handle twice: its in-flight, plus what it
 * acknowledged in the last second before the SIGKILL. The broker writes a subscription's cursor at
 * most once a second (`managedLedgerDefaultMarkDeleteRateLimit`, 1.0), so the restarted broker
 * takes the cursor up from the position it wrote last and delivers again what was acknowledged
 * after it: about a second of one replica's share of the load (250 a second in the CI profile).
 */
export const PULSAR_RESTART_IN_FLIGHT = PULSAR_IN_FLIGHT + 256;
