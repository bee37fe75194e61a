// When the engine starts a crashed kafkajs consumer again. kafkajs restarts a consumer only from a
// crash whose error it marks retriable; a cluster that stays away longer than one round of retries
// makes the restarted consumer crash on an error it does not mark so ("Failed to find group
// coordinator", "No broker available"), and kafkajs leaves it stopped for good. The engine starts it
// again itself then (errors.ts says which crashes), after a pause that grows while the cluster stays
// away, so a long outage costs a try every few seconds and not a storm of connection attempts.

/** The first pause: about kafkajs's own `retry.initialRetryTime` scale, so a blip costs little. */
const FIRST_PAUSE_MS = 500;
/** The longest pause: how late, at most, a consumer notices that the cluster is back. */
const LONGEST_PAUSE_MS = 5_000;

/** One consumer's starts again: one pending at a time, the pause doubling until it joins a group. */
export class Restarts {
  /** Starts the consumer again; a start that fails on its way is a crash of its own. */
  readonly #start: () => Promise<void>;
  #timer: NodeJS.Timeout | undefined;
  #pause = FIRST_PAUSE_MS;
  #stopped = false;

  constructor(start: () => Promise<void>) {
    this.#start = start;
  }

  /** The consumer crashed and nothing else starts it: it starts again after the pause. */
  schedule(): void {
    if (this.#stopped || this.#timer !== undefined) return;
    const pause = this.#pause;
    this.#pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.#stopped) void this.#start();
    }, pause);
  }

  /** The consumer joined its group: the cluster answers, so the next outage starts from short pauses. */
  joined(): void {
    this.#pause = FIRST_PAUSE_MS;
  }

  /** The consumer closes: nothing starts it again. */
  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
