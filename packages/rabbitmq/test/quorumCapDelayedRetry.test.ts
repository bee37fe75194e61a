import {
  type DeadLetterOrigin,
  headerNames,
  type Outcome,
  type ReadonlyHeaderMap,
  RustStream,
  readDeadLetterOrigin,
  retryAfter,
} from "@ruststream/core";
import { uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { RabbitBroker, RabbitQuorumQueue } from "../src/index.js";
import { type Mode, modes } from "./modes.js";

// A quorum queue whose cap the server keeps (`x-delivery-limit`) counts a wait queue's copy afresh,
// so a delayed retry once added the deliveries before it to the cap: `maxAttempts(3)` ran the
// handler four times. The attempts are the copy's retry count and the server's count together, and
// the package moves the message to the dead letter itself once they reach the cap.

interface DeadLetter {
  readonly id: string;
  readonly origin: DeadLetterOrigin | undefined;
  readonly retryCount: string | undefined;
  readonly deadLetterRetryCount: string | undefined;
  readonly attempt: number;
}

function deadLetterOf(id: string, headers: ReadonlyHeaderMap, attempt: number): DeadLetter {
  return {
    id,
    origin: readDeadLetterOrigin(headers),
    retryCount: headers.getString(headerNames.retryCount),
    deadLetterRetryCount: headers.getString(headerNames.deadLetterRetryCount),
    attempt,
  };
}

/** The test's messages are `{ id }`; anything else is a mistake of the test. */
function idOf(message: unknown): string {
  const id = (message as { id?: unknown } | null)?.id;
  if (typeof id !== "string") throw new Error(`not a test message: ${JSON.stringify(message)}`);
  return id;
}

/** What the handler does at each attempt of the poison message (past the list: throw). */
const plans: readonly (readonly [string, readonly ("retry-after" | "throw")[]])[] = [
  ["a delayed retry then throws", ["retry-after", "throw", "throw"]],
  ["two delayed retries then a throw", ["retry-after", "retry-after", "throw"]],
  ["a delayed retry at every attempt", ["retry-after", "retry-after", "retry-after"]],
];

/**
 * An app on `mode` whose subscriber of the quorum queue `queue` makes at most 3 attempts, then
 * dead-letters to `${queue}.dlq`. It records every run as `"<id> <attempt>"` in `runs` before
 * `handle` answers it, and every dead letter read from the dead-letter queue in `dead`.
 */
function cappedApp(
  mode: Mode,
  queue: string,
  handle: (id: string, attempt: number) => Outcome | undefined,
): { app: RustStream; dlq: string; runs: string[]; dead: DeadLetter[] } {
  const dlq = `${queue}.dlq`;
  const runs: string[] = [];
  const dead: DeadLetter[] = [];
  const app = new RustStream({ name: `cap-${queue}`, version: "1.0.0" }).broker(
    new RabbitBroker({ url: mode.url(), declare: true }),
    (b) => {
      b.subscriber(new RabbitQuorumQueue(queue))
        .maxAttempts(3)
        .deadLetter(dlq)
        .handle((message, ctx) => {
          const id = idOf(message);
          runs.push(`${id} ${ctx.attempt}`);
          return handle(id, ctx.attempt);
        });
      b.subscriber(new RabbitQuorumQueue(dlq)).handle((message, ctx) => {
        dead.push(deadLetterOf(idOf(message), ctx.headers, ctx.attempt));
      });
    },
  );
  return { app, dlq, runs, dead };
}

for (const mode of modes) {
  describe(`maxAttempts on a quorum queue whose cap the server keeps, with delayed retries (${mode.name})`, () => {
    for (const [plan, steps] of plans) {
      it(`${plan}: exactly 3 runs, then exactly one dead letter with its origin and attempts 3`, async () => {
        const queue = uniqueName("capped");
        const { app, dlq, runs, dead } = cappedApp(mode, queue, (id, attempt) => {
          if (id === "sentinel") return undefined;
          if (steps[attempt - 1] === "retry-after") return retryAfter(50);
          throw new Error(`attempt ${attempt} fails`);
        });
        const t = await mode.start(app);
        await t.publish(queue, { id: "poison" });
        // The stand-in's wait queues run on the test's clock, the node's on its own: advance until
        // the dead letter arrived (a bounded wait on the node).
        const deadline = Date.now() + 30_000;
        while (dead.length === 0) {
          if (Date.now() > deadline) throw new Error(`no dead letter; runs ${runs.join(", ")}`);
          await t.advance(50);
        }
        expect(runs).toEqual(["poison 1", "poison 2", "poison 3"]);
        expect(dead).toEqual([
          {
            id: "poison",
            origin: expect.objectContaining({ source: queue, reason: "max-attempts" }),
            retryCount: "3",
            deadLetterRetryCount: "3",
            attempt: 1,
          },
        ]);
        // Sentinels, each behind what could still come: a fourth run would reach the handler before
        // the queue's sentinel, a second dead letter the dead-letter queue before its own.
        await t.publish(queue, { id: "sentinel" });
        await t.publish(dlq, { id: "sentinel" });
        expect(runs).toEqual(["poison 1", "poison 2", "poison 3", "sentinel 1"]);
        expect(dead.map((d) => d.id)).toEqual(["poison", "sentinel"]);
        const moves = t.events.filter((e) => e.type === "dead-letter");
        expect(moves).toHaveLength(1);
        expect(moves[0]).toMatchObject({
          subscriber: queue,
          destination: dlq,
          reason: "max-attempts",
        });
      }, 60_000);
    }
  });
}

// A wait queue's copy whose service died in its last attempt's handler (or between its dead
// letter's confirm and its ack) comes back with a retry count that puts it past the cap, counted by
// the server afresh: it is moved to the dead letter on arrival, never handed to the handler.
for (const mode of modes) {
  it(`a copy arriving past the cap goes to the dead letter without a handler run (${mode.name})`, async () => {
    const queue = uniqueName("capped-arrival");
    const { app, dlq, runs, dead } = cappedApp(mode, queue, () => undefined);
    const t = await mode.start(app);
    // What the crashed service's copy looks like: three attempts made, the server's count afresh.
    await t.publish(queue, { id: "spent" }, { headers: { [headerNames.retryCount]: "3" } });
    const deadline = Date.now() + 30_000;
    while (dead.length === 0 && runs.length === 0) {
      if (Date.now() > deadline) throw new Error("neither a dead letter nor a handler run");
      await t.advance(50);
    }
    expect(runs).toEqual([]);
    expect(dead).toEqual([
      {
        id: "spent",
        origin: expect.objectContaining({ source: queue, reason: "max-attempts" }),
        retryCount: "4",
        deadLetterRetryCount: "4",
        attempt: 1,
      },
    ]);
    // Sentinels behind what could still come: a run of the spent copy would reach the handler
    // before the queue's sentinel, a second dead letter the dead-letter queue before its own.
    await t.publish(queue, { id: "sentinel" });
    await t.publish(dlq, { id: "sentinel" });
    expect(runs).toEqual(["sentinel 1"]);
    expect(dead.map((d) => d.id)).toEqual(["spent", "sentinel"]);
    const moves = t.events.filter((e) => e.type === "dead-letter");
    expect(moves).toHaveLength(1);
    expect(moves[0]).toMatchObject({ subscriber: queue, destination: dlq, reason: "max-attempts" });
  }, 60_000);
}
