// What one replica of the NATS, RabbitMQ and PostgreSQL services may hold unsettled, shared by the
// services (which set it) and the scenarios (whose duplicate bound is made of it).

/**
 * JetStream: the durable consumer's `max_ack_pending`, the most messages delivered and not acked
 * across the consumer (so for one replica at most), and one pull's size below it. A kill, or a cut
 * that loses the acks, makes the server deliver those again once their ack wait ran out.
 */
export const NATS_MAX_ACK_PENDING = 64;
/**
 * The same with a retry plan: a message nak'd with a delay stays pending at the server for its delay
 * (1.5 s), and a tenth of the load is delayed, so 64 would hold the consumer at about 43 messages a
 * second of new work (the long profile's seed 1 read 16,659 still unhandled when its drain ended).
 * A delayed message is not handed out meanwhile, so what a fault may make a replica handle twice is
 * still at most this.
 */
export const NATS_RETRY_MAX_ACK_PENDING = 256;
export const NATS_FETCH_SIZE = 32;
/** The server's ack wait: how long a killed replica's messages wait before they go to another. */
export const NATS_ACK_WAIT_MS = 5_000;

/**
 * What a hard restart of the server may make one replica handle twice: its in-flight, plus the
 * acks the server had taken and not yet written to the consumer's state when it was killed (it
 * keeps them in memory and writes the state in the background: `@ruststream/nats`' README, "The
 * server away"). About a second of one replica's share of the load.
 */
export const NATS_RESTART_IN_FLIGHT = NATS_MAX_ACK_PENDING + 512;

/** RabbitMQ: the consumer channel's `basic.qos` prefetch, the server's bound on unacked deliveries. */
export const RABBIT_PREFETCH = 32;

/**
 * PostgreSQL: the runtime's prefetch (the claims stop there) and one claim's rows. A killed
 * replica's leased rows are claimed again once their lease ends.
 */
export const POSTGRES_PREFETCH = 32;
export const POSTGRES_CLAIM = 16;
/** A claim's lease, renewed every third of it while the rows are in work. */
export const POSTGRES_LEASE_MS = 5_000;
/** The table the scenarios' queues live in (one per run would leave tables behind). */
export const POSTGRES_TABLE = "ruststream_chaos";
/**
 * The broker's pool (the package's default, set here so the bound below follows it). A
 * transactional queue holds one connection per row in work and keeps one for claims and settles.
 */
export const POSTGRES_POOL_SIZE = 10;
/**
 * What a transactional replica may have handled and not committed when a fault lands: its rows in
 * work, each in a transaction of its own on a connection of the pool (the claims take no more).
 */
export const POSTGRES_TRANSACTIONAL_IN_FLIGHT = POSTGRES_POOL_SIZE - 1;
/**
 * Where a transactional handler writes its business row, in the claim's transaction: one row per
 * commit, with no unique key, so a row committed twice shows as two.
 */
export const POSTGRES_BUSINESS_TABLE = "ruststream_chaos_business";
