import { type BacklogCounts, RustStreamError } from "@ruststream/core";
import type { Queryable } from "../client/driver.js";
import type {
  Claim,
  ClaimedRow,
  Held,
  HeldTransaction,
  NewRow,
  QueueStore,
  Settle,
} from "../client/store.js";
import type { MemoryServer, WakeEvents } from "./memoryServer.js";

/** A connection's store over the in-process server: the async face of its synchronous rules. */
export class MemoryStore implements QueueStore {
  readonly #server: MemoryServer;

  constructor(server: MemoryServer) {
    this.#server = server;
  }

  async insert(rows: readonly NewRow[], via?: Queryable): Promise<void> {
    if (via !== undefined) {
      throw new RustStreamError(
        "unsupported",
        "the in-process stand-in has no SQL database, so a publish cannot join your transaction: in a test with TestApp, publish without the transaction option (a live test against PostgreSQL runs it)",
      );
    }
    this.#server.insertNow(rows);
  }

  async claim(claim: Claim): Promise<ClaimedRow[]> {
    return this.#server.claim(claim);
  }

  async settle(held: readonly Held[], settle: Settle): Promise<Set<bigint>> {
    return this.#server.settle(held, settle);
  }

  async extend(held: readonly Held[], leaseMs: number): Promise<Set<bigint>> {
    return this.#server.extend(held, leaseMs);
  }

  async nextDue(queue: string): Promise<number | undefined> {
    return this.#server.nextDue(queue);
  }

  async backlog(
    queue: string,
    deadLetter: string | undefined,
    cap: number,
  ): Promise<BacklogCounts> {
    return this.#server.backlog(queue, deadLetter, cap);
  }

  async redrive(deadLetter: string, source: string | undefined): Promise<number> {
    return this.#server.redrive(deadLetter, source);
  }

  async purgeDone(olderThanMs: number): Promise<number> {
    return this.#server.purgeDone(olderThanMs);
  }

  /** The stand-in holds rows in memory, with no connection to run out of. */
  reserveHolds(want: number): number {
    return want;
  }

  returnHolds(): void {}

  async purgeQueue(queue: string): Promise<number> {
    return this.#server.purgeQueue(queue);
  }

  async listen(events: WakeEvents): Promise<() => Promise<void>> {
    const stop = this.#server.listen(events);
    return async () => {
      stop();
    };
  }

  /**
   * A transactional handler's transaction, in memory: nothing to write to, so its statements are
   * refused saying so, and the settle applies to the row as the server's commit would.
   */
  async hold(held: Held): Promise<HeldTransaction | undefined> {
    const server = this.#server;
    if (!server.holds(held)) return undefined;
    return {
      tx: {
        query: async () => {
          throw new RustStreamError(
            "unsupported",
            "the in-process stand-in has no SQL database: a transactional handler's statements run against PostgreSQL only (test them in a live test; in TestApp, keep the handler's SQL behind a function you replace)",
          );
        },
      },
      settle: async (settle) => server.settle([held], settle).has(held.id),
      abandon: async () => {},
    };
  }

  subscribed(queue: string): () => void {
    return this.#server.subscribed(queue);
  }

  async close(): Promise<void> {}
}
