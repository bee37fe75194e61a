import {
  type Bindings,
  type BrokerMovesSource,
  type RetryDeclaration,
  RustStreamError,
} from "@ruststream/core";
import { positive, sourceMark } from "@ruststream/core/broker";

/** What a claimed row's ack does: delete it, or keep it marked done until the retention sweep. */
export type AckMode = "delete" | "keep";

export interface PostgresQueueOptions {
  /**
   * Rows one claim takes at most (default 16), within what the runtime asks for (its `prefetch`,
   * or its `batch`). Size it to the subscriber's workers: claimed rows wait leased in this process
   * until a worker is free, and no other worker takes them meanwhile.
   */
  readonly claim?: number;
  /**
   * How long a claim holds its rows (default 30,000 ms), renewed every third of it while they are
   * in work: a worker that dies stops renewing, and its rows go to the next claim once the lease
   * ends. A settle is fenced by the lease, so a worker whose lease ended settles nothing.
   */
  readonly leaseMs?: number;
  /**
   * Run the handler inside the claim's transaction (default `false`): the row is locked by that
   * transaction while the handler runs, the handler gets it (`transactionOf(ctx.delivery)`), and
   * its writes commit together with the settle, or roll back with a retry. One pool connection per
   * row in work.
   */
  readonly transactional?: boolean;
  /**
   * Rows with a partition key are claimed in order, by one claimant at a time per key (default
   * `true`): a claim takes a key's oldest undone row and the ready rows right behind it (`perKey`
   * at most), and no other claimant takes a row of that key while it holds them; a row behind a
   * head retried with a delay waits for it. Rows without a key are unaffected.
   */
  readonly keyOrder?: boolean;
  /**
   * With `keyOrder`, rows of one key one claim takes at most (default: `claim`). `1` takes only a
   * key's oldest undone row, so the rows behind it are claimed after it, each by a claim of its
   * own (what the outbox relay does: it publishes a claim's rows side by side).
   */
  readonly perKey?: number;
  /** What an ack does (default `"delete"`); `"keep"` marks the row done, purged after `retainMs`. */
  readonly ack?: AckMode;
  /** How long a kept done row stays (default 7 days); swept by the subscriptions. */
  readonly retainMs?: number;
  /**
   * How long an idle subscription waits at most before it looks again (default 1000 ms): the
   * wake-ups come by LISTEN/NOTIFY, and this is the backstop when one is lost.
   */
  readonly pollMs?: number;
}

const defaults = {
  claim: 16,
  leaseMs: 30_000,
  retainMs: 7 * 24 * 3_600_000,
  pollMs: 1000,
} as const;

/**
 * A queue in the queue table: the descriptor `subscribe` takes. Workers of one queue share its
 * rows (each claimed by one worker at a time). The broker moves failing rows itself: a retry moves
 * the row's run time, and with a declared cap and dead letter (`maxAttempts`, `deadLetter`), a
 * row claimed that many times moves to the dead-letter queue with its origin.
 */
export class PostgresQueue implements BrokerMovesSource {
  readonly [sourceMark] = "postgres";
  readonly copies = "broker" as const;
  readonly name: string;
  readonly retry: RetryDeclaration | undefined;
  readonly claim: number;
  readonly leaseMs: number;
  readonly transactional: boolean;
  readonly keyOrder: boolean;
  readonly perKey: number;
  readonly ack: AckMode;
  readonly retainMs: number;
  readonly pollMs: number;
  readonly #options: PostgresQueueOptions;

  constructor(name: string, options: PostgresQueueOptions = {}, retry?: RetryDeclaration) {
    if (typeof name !== "string" || name === "") {
      throw new RustStreamError(
        "invalid-argument",
        'PostgresQueue needs a queue name: new PostgresQueue("jobs")',
      );
    }
    this.name = name;
    this.#options = options;
    this.claim = positive("claim", options.claim, defaults.claim);
    this.leaseMs = positive("leaseMs", options.leaseMs, defaults.leaseMs);
    this.retainMs = positive("retainMs", options.retainMs, defaults.retainMs);
    this.pollMs = positive("pollMs", options.pollMs, defaults.pollMs);
    this.transactional = options.transactional ?? false;
    this.keyOrder = options.keyOrder ?? true;
    this.perKey = positive("perKey", options.perKey, this.claim);
    if (options.ack !== undefined && options.ack !== "delete" && options.ack !== "keep") {
      throw new RustStreamError(
        "invalid-argument",
        `PostgresQueue("${name}", { ack: ${JSON.stringify(options.ack)} }): give "delete" or "keep"`,
      );
    }
    this.ack = options.ack ?? "delete";
    if (retry !== undefined) checkRetry(name, retry);
    this.retry = retry;
  }

  declareRetry(declaration: RetryDeclaration): PostgresQueue {
    return new PostgresQueue(this.name, this.#options, declaration);
  }

  /** Rows carry the partition key they were published with. */
  get carriesPartitionKey(): boolean {
    return true;
  }

  /** For generated docs. */
  get bindings(): Bindings {
    return {
      postgres: {
        claim: this.claim,
        leaseMs: this.leaseMs,
        transactional: this.transactional,
        keyOrder: this.keyOrder,
        ack: this.ack,
      },
    };
  }
}

/** Both halves of a retry declaration, or neither: a cap with nowhere to go is a mistake. */
function checkRetry(name: string, retry: RetryDeclaration): void {
  const { maxAttempts, deadLetter } = retry;
  if ((maxAttempts === undefined) !== (deadLetter === undefined)) {
    throw new RustStreamError(
      "invalid-argument",
      `PostgresQueue("${name}"): declare maxAttempts and deadLetter together, or neither`,
    );
  }
  if (maxAttempts !== undefined) positive("maxAttempts", maxAttempts, 1);
  if (deadLetter !== undefined && (typeof deadLetter !== "string" || deadLetter === "")) {
    throw new RustStreamError(
      "invalid-argument",
      `PostgresQueue("${name}"): deadLetter must be a queue name`,
    );
  }
  if (deadLetter === name) {
    throw new RustStreamError(
      "invalid-argument",
      `PostgresQueue("${name}"): the dead letter must be another queue than the one it serves`,
    );
  }
}
