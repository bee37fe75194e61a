import {
  isRustStreamError,
  type Publisher,
  supportsTransactions,
  type Transaction,
  type TransactionalPublisher,
} from "@ruststream/core";
import { expect } from "vitest";
import { bytes, text } from "../helpers/payloadText.js";
import { sleep } from "../helpers/sleep.js";
import { uniqueName } from "../helpers/uniqueName.js";
import {
  type AnyConnected,
  type BrokerFactories,
  type Harness,
  harnessOf,
  withConnection,
} from "./harness.js";
import { ackAll, Collector, elsewhere, throughSentinel } from "./helpers.js";
import { registerSuite, type Scenario } from "./scenario.js";

function transactional(publisher: Publisher<never>): TransactionalPublisher {
  if (!supportsTransactions(publisher)) {
    throw new Error("the publisher has no transactions (supportsTransactions is false)");
  }
  return publisher;
}

async function open(h: Harness, connected: AnyConnected) {
  const name = uniqueName("tx");
  const collector = new Collector(await connected.subscribe(h.source(name)));
  const publisher = transactional(await h.publisher(connected));
  return { name, collector, publisher };
}

class Aborted extends Error {}

export const transactionScenarios: readonly Scenario<Harness>[] = [
  {
    name: "nothing is visible before commit, and commit publishes in order",
    needs: ["transactions"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected);
        await publisher.transaction(async (tx) => {
          for (const p of ["a", "b", "c"]) await tx.publish({ name, payload: bytes(p) });
          // A direct publish behind them, read while the transaction is open: had they been
          // visible, they would have arrived first, however slowly.
          const seen = await throughSentinel(publisher, collector, name, h.arrivalMs, "open");
          expect(seen, "nothing from the open transaction").toEqual(["sentinel"]);
        });
        const got = await collector.waitFor(4, h.arrivalMs, "after commit");
        expect(got.slice(1).map((d) => text(d.payload))).toEqual(["a", "b", "c"]);
        await ackAll(got);
        await collector.stop();
      }),
  },
  {
    name: "a transaction whose work throws is aborted and publishes nothing",
    needs: ["transactions"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected);
        await expect(
          publisher.transaction(async (tx) => {
            await tx.publish({ name, payload: bytes("discarded") });
            throw new Aborted("abort");
          }),
        ).rejects.toBeInstanceOf(Aborted);
        const seen = await throughSentinel(publisher, collector, name, h.arrivalMs, "after abort");
        expect(seen, "nothing from the aborted transaction").toEqual(["sentinel"]);
        await ackAll(collector.items);
        await collector.stop();
      }),
  },
  {
    name: "publishing on a transaction that ended is refused",
    needs: ["transactions"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected);
        let kept: Transaction | undefined;
        await publisher.transaction(async (tx) => {
          kept = tx;
        });
        let error: unknown;
        try {
          await kept!.publish({ name, payload: bytes("late") });
        } catch (e) {
          error = e;
        }
        expect(isRustStreamError(error, "transaction-ended"), String(error)).toBe(true);
        const seen = await throughSentinel(publisher, collector, name, h.arrivalMs, "ended");
        expect(seen, "nothing from an ended transaction").toEqual(["sentinel"]);
        await ackAll(collector.items);
        await collector.stop();
      }),
  },
  {
    name: "transactions are independent of each other and of direct publishes",
    needs: ["transactions"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected);
        let release: () => void = () => {};
        const gate = new Promise<void>((resolve) => {
          release = resolve;
        });
        const held = publisher
          .transaction(async (tx) => {
            await tx.publish({ name, payload: bytes("held") });
            await gate;
            throw new Aborted("abort the held one");
          })
          .catch((e: unknown) => e);
        await publisher.transaction(async (tx) => tx.publish({ name, payload: bytes("other") }));
        await publisher.publish({ name, payload: bytes("direct") });
        const got = await collector.waitFor(2, h.arrivalMs, "while one transaction is open");
        expect(got.map((d) => text(d.payload))).toEqual(["other", "direct"]);
        release();
        expect(await held).toBeInstanceOf(Aborted);
        const seen = await throughSentinel(publisher, collector, name, h.arrivalMs, "aborted");
        expect(seen, "the aborted one never shows").toEqual(["other", "direct", "sentinel"]);
        await ackAll(collector.items);
        await collector.stop();
      }),
  },
  {
    name: "work that continues in another task still commits",
    needs: ["transactions"],
    run: (h) =>
      withConnection(h, async (connected) => {
        const { name, collector, publisher } = await open(h, connected);
        await publisher.transaction(async (tx) => {
          await elsewhere(() => tx.publish({ name, payload: bytes("from-elsewhere") }));
          await sleep(1);
        });
        const got = await collector.waitFor(1, h.arrivalMs, "after commit");
        expect(text(got[0]!.payload)).toBe("from-elsewhere");
        await ackAll(got);
        await collector.stop();
      }),
  },
  {
    name: "after shutdown a stranded transaction fails to commit, and a new one fails",
    needs: ["transactions"],
    run: async (h) => {
      const connected = await h.connect();
      const { name, publisher } = await open(h, connected);
      let error: unknown;
      try {
        await publisher.transaction(async (tx) => {
          await tx.publish({ name, payload: bytes("stranded") });
          await connected.shutdown();
        });
      } catch (e) {
        error = e;
      }
      expect(isRustStreamError(error, "closed"), `stranded commit: ${String(error)}`).toBe(true);
      let again: unknown;
      try {
        await publisher.transaction(async () => {});
      } catch (e) {
        again = e;
      }
      expect(isRustStreamError(again, "closed"), `new transaction: ${String(again)}`).toBe(true);
      const next = await h.connect();
      try {
        const collector = new Collector(await next.subscribe(h.source(name)));
        const seen = await throughSentinel(
          await h.publisher(next),
          collector,
          name,
          h.arrivalMs,
          "stranded",
        );
        expect(seen, "a stranded transaction published nothing").toEqual(["sentinel"]);
        await ackAll(collector.items);
        await collector.stop();
      } finally {
        await next.shutdown();
      }
    },
  },
];

/** Registers the transaction suite: visibility, abort, misuse, independence and shutdown. */
export function transactions<TConnected extends AnyConnected>(
  factories: BrokerFactories<TConnected>,
): void {
  const h = harnessOf(factories);
  registerSuite(
    "transactions",
    transactionScenarios,
    h,
    h.capabilities,
    h.arrivalMs * 3 + h.silenceMs * 4,
  );
}
