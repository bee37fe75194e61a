// The wait both server engines' `start()` ends with: a consumer counts as started once the group
// handed it its first assignment (possibly empty) and the subscription placed those partitions.
// A group that never assigns would leave `start()` pending for good, so the wait is bounded, and
// its error names what usually keeps an assignment away.

/** How long `start()` waits for the group's first assignment. */
export const ASSIGNMENT_WAIT_MS = 60_000;

/** The first assignment of one consumer: reported once by the engine, awaited once by `start()`. */
export class FirstAssignment {
  readonly #group: string;
  readonly #topics: readonly string[];
  readonly #applied: Promise<void>;
  #resolve: (() => void) | undefined;

  constructor(group: string, topics: readonly string[]) {
    this.#group = group;
    this.#topics = topics;
    this.#applied = new Promise<void>((resolve) => {
      this.#resolve = resolve;
    });
  }

  /** The first assignment has been applied; calls after the first change nothing. */
  applied(): void {
    this.#resolve?.();
    this.#resolve = undefined;
  }

  /** Resolves once `applied()` ran (before or after this call); rejects after `ms` without it. */
  async wait(ms: number = ASSIGNMENT_WAIT_MS): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `consumer group "${this.#group}" assigned no partitions of ${this.#topics.join(", ")} ` +
                `within ${ms} ms: check that the brokers are reachable, that the topics exist, and ` +
                "that the group's other members are alive (a group waiting on a member that left " +
                "without leaving the group assigns nothing until that member's session times out)",
            ),
          ),
        ms,
      );
    });
    try {
      await Promise.race([this.#applied, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
