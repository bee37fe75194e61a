import type { RustStreamError } from "../errors.js";

// What a connection and its subscriptions need from each other, named once for every broker. A
// broker's own host interface (RedisHost, PulsarHost, KafkaHost) extends SubscriptionHost with what
// its modes need besides, MemoryHost and FileHost too; the connection implements it, so no mode imports
// the connection. ConnectionBase implements both methods: a broker writes neither.

/** What every subscription and its deliveries need from their connection. */
export interface SubscriptionHost {
  /** Throws the `closed` error once the connection has shut down. */
  assertOpen(): void;
  /**
   * A subscription that closed itself (`close()`) says so here, once: the connection lets go of it,
   * so its shutdown takes back only what is still open. The one way a subscription leaves its
   * connection; one taken back at shutdown needs not call it.
   */
  forget(subscription: HostedSubscription): void;
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
 * goes on: what that subscription held stays with the server, which hands it out again. With
 * `withinMs`, a take-back still running then is left to finish on its own, and what had not
 * surrendered by then counts 0 the same way: a server that stopped answering cannot hold a shutdown.
 * Answers how many deliveries went back.
 */
export async function takeBack(
  subscriptions: Iterable<HostedSubscription>,
  error: RustStreamError,
  withinMs?: number,
): Promise<number> {
  const all = [...subscriptions];
  let returned = 0;
  const work = (async () => {
    await Promise.all(all.map((s) => s.revoke(error)));
    await Promise.all(
      all.map((s) =>
        s.surrender().then(
          (count) => {
            returned += count;
          },
          () => undefined,
        ),
      ),
    );
  })();
  if (withinMs === undefined) {
    await work;
    return returned;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    work.catch(() => undefined),
    new Promise((resolve) => {
      timer = setTimeout(resolve, withinMs);
    }),
  ]);
  clearTimeout(timer);
  return returned;
}
