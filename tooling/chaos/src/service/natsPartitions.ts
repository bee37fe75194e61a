// The partitioned JetStream layout of the NATS cluster scenario, shared by the runner (which makes
// the stream and kills the nodes leading it and its consumers) and the services (which consume it).
// The stream's own subject transform spreads the keys over partitions (the server's `partition()`:
// a key's subject lands in the same partition every time), and each partition has one durable pull
// consumer with `max_ack_pending` 1, every replica pulling from every one: the server hands out a
// partition's next message only once the one before it was acked, so a key's messages are handled
// in stream order whichever replica takes them, across a replica's death and a leader's.

/** Partitions of the stream, each a durable consumer: the handling's parallelism. */
export const NATS_PARTITIONS = 8;

/** What one partition's consumer hands out unacked: one, for order. */
export const NATS_PARTITION_MAX_ACK_PENDING = 1;

/**
 * What one replica may hold unsettled: a message of each partition, since every replica pulls from
 * every partition and each partition hands out one at a time.
 */
export const NATS_PARTITIONED_IN_FLIGHT = NATS_PARTITIONS * NATS_PARTITION_MAX_ACK_PENDING;

/** The subject the load publishes a key's messages to: `<stream>.<key>`. */
export const keySubject = (stream: string, key: string): string => `${stream}.${key}`;

/**
 * The stream's subject transform: `<stream>.<key>` is stored as `<stream>.<partition>`, the
 * partition the server's deterministic hash of the key token picks (the key itself travels in the
 * body and the partition key header). A partition is then one plain subject, a consumer's filter.
 */
export const partitionTransform = (stream: string) => ({
  src: `${stream}.*`,
  dest: `${stream}.{{partition(${NATS_PARTITIONS},1)}}`,
});

/** Partition `p`'s subject, as the stream stores it. */
export const partitionSubject = (stream: string, p: number): string => `${stream}.${p}`;

/** Partition `p`'s durable consumer. */
export const partitionDurable = (group: string, p: number): string => `${group}-p${p}`;

export const partitions = (): number[] => Array.from({ length: NATS_PARTITIONS }, (_, p) => p);
