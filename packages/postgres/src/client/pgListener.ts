import pg from "pg";
import type { ListenEvents, Listening } from "./driver.js";

/** How long a lost listener waits before it tries again, first and at most. */
const retryFirstMs = 100;
const retryMaxMs = 5000;

/** One LISTEN on a connection of its own, made again when lost. */
export class PgListener implements Listening {
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
