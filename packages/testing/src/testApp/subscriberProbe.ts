import { deepStrictEqual } from "node:assert/strict";
import { isDeepStrictEqual } from "node:util";
import { type OutcomeEvent, RustStreamError, type SettledAs } from "@ruststream/core";

function fail(message: string): never {
  const error = new Error(message);
  error.name = "AssertionError";
  throw error;
}

/**
 * What one subscriber did during a test: the messages its handler got, how each delivery was settled,
 * and what failed to decode. Read it after `publish`, `settle` or `advance`, which return only once
 * the reaction is over.
 */
export class SubscriberProbe {
  readonly name: string;
  readonly #events: readonly OutcomeEvent[];

  /** @internal Built by `TestApp.subscriber`. */
  constructor(name: string, events: readonly OutcomeEvent[]) {
    this.name = name;
    this.#events = events;
  }

  /** The decoded messages the handler was called with, in order (one per delivery). */
  get calls(): readonly unknown[] {
    return this.#events.filter((e) => e.handled).map((e) => e.message);
  }

  /** How each delivery was settled, in order, decode failures included. */
  get outcomes(): readonly SettledAs[] {
    return this.#events.map((e) => e.outcome);
  }

  /** The errors of deliveries that failed to decode or validate. */
  get decodeFailures(): readonly unknown[] {
    return this.#events.filter((e) => !e.handled).map((e) => e.error);
  }

  /** The attempt numbers of the handler calls, in order. */
  get attempts(): readonly number[] {
    return this.#events.filter((e) => e.handled).map((e) => e.attempt);
  }

  assertCalled(times: number): this {
    const calls = this.calls.length;
    if (calls !== times) {
      fail(`subscriber "${this.name}" was called ${calls} time(s), expected ${times}`);
    }
    return this;
  }

  assertCalledOnce(): this {
    return this.assertCalled(1);
  }

  assertNotCalled(): this {
    return this.assertCalled(0);
  }

  /** Some call got a message deeply equal to `message`. */
  assertCalledWith(message: unknown): this {
    if (!this.calls.some((call) => isDeepStrictEqual(call, message))) {
      deepStrictEqual(
        this.calls,
        [message],
        `subscriber "${this.name}" was never called with the expected message`,
      );
    }
    return this;
  }

  /** The outcomes so far are exactly `expected`, in order. */
  assertOutcomes(...expected: SettledAs[]): this {
    deepStrictEqual(
      [...this.outcomes],
      expected,
      `subscriber "${this.name}" settled its deliveries differently`,
    );
    return this;
  }

  /** The last delivery failed to decode or validate. */
  assertLastFailedToDecode(): this {
    const last = this.#events.at(-1);
    if (last === undefined) fail(`subscriber "${this.name}" got no delivery`);
    if (last.handled) {
      fail(`the last delivery of "${this.name}" decoded fine (its outcome: ${last.outcome})`);
    }
    return this;
  }

  /** The error the last failing handler call threw, or `undefined`. */
  get lastError(): unknown {
    for (let i = this.#events.length - 1; i >= 0; i--) {
      const error = this.#events[i]!.error;
      if (error !== undefined) return error;
    }
    return undefined;
  }
}

export function unknownSubscriber(name: string, known: readonly string[]): RustStreamError {
  return new RustStreamError(
    "invalid-argument",
    `no subscriber named "${name}": the app has ${known.length === 0 ? "none" : known.map((k) => `"${k}"`).join(", ")}`,
  );
}
