import {
  type BacklogCounts,
  type Broker,
  type RuntimeEvent,
  RustStream,
  type SubscriptionEvent,
  systemClock,
} from "@ruststream/core";
import { brokerMark, CountingCoordinator } from "@ruststream/core/broker";
import { requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, test } from "vitest";
import { type ConnectedPostgresBroker, PostgresBroker, PostgresQueue } from "../src/index.js";
import { waitUntil } from "./support.js";

// A queue's backlog as the app's subscription answers it (what @ruststream/metrics' gauge reads):
// rows ready, delayed, leased by a handler held open, and dead-lettered, on the real server and on
// the in-process stand-in, which must answer the same counts.

/**
 * One app on `broker`: a row that fails goes to the dead letter (one attempt), two rows are held in
 * their handlers (two workers, so the pull waits for them and claims nothing more), then three
 * ready rows and two delayed by a minute are published behind them.
 */
async function scenario(broker: Broker): Promise<BacklogCounts> {
  const queue = uniqueName("backlog");
  const events: RuntimeEvent[] = [];
  const entered: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const app = new RustStream({ name: "backlog", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber<string>(new PostgresQueue(queue, { pollMs: 200 }))
      .workers(2)
      .maxAttempts(1)
      .deadLetter(`${queue}-dlq`)
      .handle(async (m) => {
        if (m === "fail") throw new Error("always");
        entered.push(m);
        await held;
      });
  });
  app.observe((e) => events.push(e));
  const running = await app.start();
  try {
    await running.publish(queue, "fail");
    await waitUntil(10_000, "the dead letter", () => events.some((e) => e.type === "dead-letter"));
    // One at a time, each handler entered before the next row: each claim takes one row.
    await running.publish(queue, "hold 1");
    await waitUntil(10_000, "the first handler", () => entered.length === 1);
    await running.publish(queue, "hold 2");
    await waitUntil(10_000, "the second handler", () => entered.length === 2);
    for (const m of ["a", "b", "c"]) await running.publish(queue, m);
    for (const m of ["later 1", "later 2"]) {
      await running.publish(queue, m, { options: { delayMs: 60_000 } });
    }
    const started = events.find(
      (e): e is SubscriptionEvent => e.type === "subscription" && e.state === "started",
    );
    const backlog = started?.backlog;
    if (backlog === undefined) throw new Error("the subscription event carries no backlog");
    const counts = await backlog();
    // Nothing was claimed meanwhile: both handlers are still held.
    expect(entered).toEqual(["hold 1", "hold 2"]);
    return counts;
  } finally {
    release();
    await running.stop();
  }
}

const expected: BacklogCounts = { ready: 3, scheduled: 2, leased: 2, "dead-lettered": 1 };

describe("a queue's backlog", () => {
  test("on the server: ready, scheduled, leased (held in handlers) and dead-lettered rows", async () => {
    const broker = new PostgresBroker({
      url: requireEnv("POSTGRES_URL"),
      table: "backlog_queue",
      ensureSchema: true,
    });
    expect(await scenario(broker)).toEqual(expected);
  });

  test("the in-process stand-in answers the same counts", async () => {
    const server = new PostgresBroker({ url: "postgres://nobody@127.0.0.1:1/none" });
    const broker: Broker<ConnectedPostgresBroker> = {
      [brokerMark]: "postgres",
      connect: () =>
        server.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
    };
    expect(await scenario(broker)).toEqual(expected);
  });
});
