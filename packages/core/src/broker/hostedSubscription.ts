import type { RustStreamError } from "../errors.js";

// What a connection and its subscriptions need from each other, named once for every broker. A
// broker's own host interface (RedisHost, PulsarHost, KafkaHost) extends SubscriptionHost with what
// its modes need besides, MemoryHost and FileHost too; the connection implements it, so no mode imports broker.ts.

/** What every subscription and its deliveries need from their connection. */
export interface SubscriptionHost {
  /** Throws the `closed` error once the connection has shut down. */
  assertOpen(): void;
}

/**
 * A subscription as its connection tracks it, to take back what it holds at shutdown. The
 * connection revokes every subscription first, so none pulls more, then surrenders each.
 */
export interface HostedSubscription {
  /** Stops pulling at once: a waiting pull rejects with `error`, and so does every later one. */
  revoke(error: RustStreamError): void | Promise<void>;
  /**
   * Gives back what it still holds (read and not handed out, or handed out and not settled) and lets
   * go of its connection to the server; answers how many deliveries went back.
   */
  surrender(): Promise<number>;
}

/**
 * Takes back what `subscriptions` hold, at shutdown: every one is revoked first, so none pulls what
 * another gives back, then all surrender together. A surrender that fails counts 0 and the shutdown
 * goes on: what that subscription held stays with the server, which hands it out again. Answers how
 * many deliveries went back.
 */
export async function takeBack(
  subscriptions: Iterable<HostedSubscription>,
  error: RustStreamError,
): Promise<number> {
  const all = [...subscriptions];
  await Promise.all(all.map((s) => s.revoke(error)));
  const counts = await Promise.all(all.map((s) => s.surrender().catch(() => 0)));
  return counts.reduce((sum, count) => sum + count, 0);
}
