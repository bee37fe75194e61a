// What one Kafka replica may handle again after one fault: the scenarios' at-least-once bound.
// Provisional: sized from measured runs below, see the README's "What the checker promises".

/** `tracked`: what a replica handled since librdkafka's last auto-commit (every 1 s). */
export const KAFKA_TRACKED_IN_FLIGHT = 1_024;

/** `transactional`: what a replica handled since its last committed transaction. */
export const KAFKA_TRANSACTIONAL_IN_FLIGHT = 1_024;
