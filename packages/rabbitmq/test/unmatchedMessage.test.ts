import { RustStream, readDeadLetterOrigin, type StandardSchemaV1 } from "@ruststream/core";
import { uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { RabbitBroker, RabbitQueue, RabbitQuorumQueue, type RabbitSource } from "../src/index.js";
import { modes } from "./modes.js";

// A message the subscriber's handler does not take (its schema, which says what the handler is
// for, matches nothing in it) is the runtime's to settle by the decode policy: dead-lettered where
// a dead letter is declared, else rejected. It never reaches the handler and never stays unsettled:
// with a prefetch of 1 the message behind it could not arrive otherwise.

interface Order {
  readonly kind: "order";
  readonly id: string;
}

/** Takes orders only: what the handler is written for. */
const orders: StandardSchemaV1<unknown, Order> = {
  "~standard": {
    version: 1,
    vendor: "test",
    validate: (value) => {
      const v = value as { kind?: unknown; id?: unknown } | null;
      return v?.kind === "order" && typeof v.id === "string"
        ? { value: { kind: "order", id: v.id } }
        : { issues: [{ message: "no handler takes this message: not an order" }] };
    },
  },
};

interface Variant {
  readonly name: string;
  readonly source: (queue: string) => RabbitSource;
  /** The mount's dead letter, if any, and whether the server (not the runtime) moves it there. */
  readonly deadLetter: "runtime" | "server" | undefined;
}

const variants: readonly Variant[] = [
  {
    name: "a classic queue with a dead letter: the runtime dead-letters it",
    source: (queue) => new RabbitQueue(queue, { prefetch: 1 }),
    deadLetter: "runtime",
  },
  {
    name: "a classic queue without a dead letter: it is rejected",
    source: (queue) => new RabbitQueue(queue, { prefetch: 1 }),
    deadLetter: undefined,
  },
  {
    name: "a quorum queue with maxAttempts and a dead letter: rejected, the server moves it",
    source: (queue) => new RabbitQuorumQueue(queue, { prefetch: 1 }),
    deadLetter: "server",
  },
];

for (const mode of modes) {
  describe(`a message no handler matches, prefetch 1 (${mode.name})`, () => {
    for (const variant of variants) {
      it(`${variant.name}; the next message is still delivered`, async () => {
        const queue = uniqueName("unmatched");
        const dlq = `${queue}.dlq`;
        const handled: string[] = [];
        const dead: { readonly payload: unknown; readonly reason: string | undefined }[] = [];
        const app = new RustStream({ name: `unmatched-${queue}`, version: "1.0.0" }).broker(
          new RabbitBroker({ url: mode.url(), declare: true }),
          (b) => {
            const mount = b.subscriber(variant.source(queue), { schema: orders });
            if (variant.deadLetter !== undefined) mount.maxAttempts(3).deadLetter(dlq);
            mount.handle((order) => {
              handled.push(order.id);
            });
            if (variant.deadLetter !== undefined) {
              b.subscriber(new RabbitQuorumQueue(dlq)).handle((message, ctx) => {
                dead.push({ payload: message, reason: readDeadLetterOrigin(ctx.headers)?.reason });
              });
            }
          },
        );
        const t = await mode.start(app);
        // Both published before either is settled: the order behind the unmatched message can only
        // be delivered once the unmatched one gave its prefetch slot back.
        await Promise.all([
          t.running.publish(queue, { kind: "invoice", id: "unmatched" }),
          t.running.publish(queue, { kind: "order", id: "first" }),
        ]);
        await t.settle();
        expect(handled).toEqual(["first"]);
        const failures = t.events.filter((e) => e.type === "decode-failure");
        expect(failures).toHaveLength(1);
        // A sentinel behind everything: the unmatched message did not come back before it.
        await t.publish(queue, { kind: "order", id: "sentinel" });
        expect(handled).toEqual(["first", "sentinel"]);
        const outcomes = t.subscriber(queue).outcomes;
        if (variant.deadLetter === undefined) {
          expect(outcomes).toEqual(["drop", "ack", "ack"]);
          return;
        }
        expect(outcomes).toEqual(["dead-letter", "ack", "ack"]);
        expect(dead).toEqual([
          {
            payload: { kind: "invoice", id: "unmatched" },
            // The runtime writes the origin; a move the server makes carries `x-death` only.
            reason: variant.deadLetter === "runtime" ? "decode" : undefined,
          },
        ]);
        const moves = t.events.filter((e) => e.type === "dead-letter");
        expect(moves).toEqual([
          expect.objectContaining({
            subscriber: queue,
            destination: dlq,
            movedBy: variant.deadLetter === "runtime" ? "runtime" : "broker",
          }),
        ]);
      }, 60_000);
    }
  });
}
