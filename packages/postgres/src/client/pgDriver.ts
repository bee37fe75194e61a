import pg from "pg";
import type { ListenEvents, Listening, PostgresDriver, Queryable, QueryResult } from "./driver.js";

/** How long a lost listener waits before it tries again, first and at most. */
const retryFirstMs = 100;
const retryMaxMs = 5000;

/**
 * The seam over `pg` (node-postgres): statements and transactions on a `pg.Pool`, LISTEN on a
 * client of its own with the pool's settings (a pooled connection would be handed to others).
 * `pg` does not LISTEN again after a lost connection; this does, with a backoff.
 */
export class PgDriver implements PostgresDriver {
  readonly #pool: pg.Pool;
  readonly #owned: boolean;
  readonly #applicationName: string;
  readonly #listeners = new Set<PgListener>();

  /** `pool`: a pool of the caller's (kept open at close), or settings for one of ours. */
  constructor(pool: pg.Pool | pg.PoolConfig, options: { owned: boolean; applicationName: string }) {
    this.#pool = pool instanceof pg.Pool ? pool : new pg.Pool(pool);
    this.#owned = options.owned;
    this.#applicationName = options.applicationName;
    // An idle pooled connection that dies emits here; without a listener it would crash the process.
    // The next statement on the pool opens another, and fails if the server stays away.
    if (this.#owned) this.#pool.on("error", () => {});
  }

  query(text: string, values?: unknown[]): Promise<QueryResult> {
    return this.#pool.query(text, values);
  }

  async transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    // Whether the connection's transaction state is unknown (BEGIN, COMMIT or ROLLBACK failed).
    let broken = true;
    try {
      await client.query("BEGIN");
      let result: T;
      try {
        result = await work(client);
      } catch (error) {
        await client.query("ROLLBACK").then(
          () => {
            broken = false;
          },
          () => undefined,
        );
        throw error;
      }
      await client.query("COMMIT");
      broken = false;
      return result;
    } finally {
      // A connection whose transaction state is unknown is destroyed, never handed to the next user.
      client.release(broken ? true : undefined);
    }
  }

  async listen(channel: string, events: ListenEvents): Promise<Listening> {
    const config = { ...this.#pool.options, application_name: `${this.#applicationName} listen` };
    const listener = new PgListener(config, channel, events, () =>
      this.#listeners.delete(listener),
    );
    this.#listeners.add(listener);
    await listener.start();
    return listener;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#listeners].map((l) => l.close()));
    if (this.#owned) await this.#pool.end();
  }
}

/** One LISTEN on a connection of its own, made again when lost. */
class PgListener implements Listening {
  readonly #config: pg.ClientConfig;
  readonly #channel: string;
  readonly #events: ListenEvents;
  readonly #gone: () => void;
  #client: pg.Client | undefined;
  #closed = false;
  #retryMs = retryFirstMs;
  #timer: NodeJS.Timeout | undefined;

  constructor(config: pg.ClientConfig, channel: string, events: ListenEvents, gone: () => void) {
    this.#config = config;
    this.#channel = channel;
    this.#events = events;
    this.#gone = gone;
  }

  /** The first LISTEN: a failure here is the caller's (connect fails), not retried. */
  async start(): Promise<void> {
    this.#client = await this.#connect();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#gone();
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => {});
  }

  async #connect(): Promise<pg.Client> {
    const client = new pg.Client(this.#config);
    let lost = false;
    const onLost = (reason: string) => {
      if (lost) return;
      lost = true;
      client.removeAllListeners("notification");
      if (this.#closed || this.#client !== client) return;
      this.#client = undefined;
      client.end().catch(() => {});
      this.#events.lost(reason);
      this.#retry();
    };
    client.on("error", (error) => onLost(error.message));
    client.on("end", () => onLost("the listening connection ended"));
    client.on("notification", (n) => {
      if (n.channel === this.#channel) this.#events.notified(n.payload ?? "");
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
    } catch (error) {
      lost = true;
      await client.end().catch(() => {});
      throw error;
    }
    return client;
  }

  #retry(): void {
    const wait = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, retryMaxMs);
    this.#timer = setTimeout(() => {
      this.#connect().then(
        (client) => {
          if (this.#closed) {
            client.end().catch(() => {});
            return;
          }
          this.#client = client;
          this.#retryMs = retryFirstMs;
          this.#events.restored();
        },
        (error: unknown) => {
          if (this.#closed) return;
          this.#events.lost(error instanceof Error ? error.message : String(error));
          this.#retry();
        },
      );
    }, wait);
    this.#timer.unref?.();
  }
}
