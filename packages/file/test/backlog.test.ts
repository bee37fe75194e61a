import { join } from "node:path";
import {
  type BacklogCounts,
  type Broker,
  type RuntimeEvent,
  RustStream,
  type SubscriptionEvent,
  systemClock,
} from "@ruststream/core";
import { brokerMark, CountingCoordinator, reportsBacklog } from "@ruststream/core/broker";
import { describe, expect, test } from "vitest";
import { type ConnectedFileBroker, FileBroker, FileStream } from "../src/index.js";
import { tempDir } from "./tempDir.js";

// A named consumer's backlog (what @ruststream/metrics' gauge reads): the stream's messages in the
// file it has not settled, on a real file and on the in-process stand-in (the same code over a
// private file), which must agree.

const dir = tempDir("ruststream-file-backlog-");
let files = 0;

const real = (): Broker<ConnectedFileBroker> =>
  new FileBroker({ path: join(dir, `backlog-${++files}.ss`) });
const inProcess = (): Broker<ConnectedFileBroker> => {
  const broker = new FileBroker({ path: join(dir, `in-process-${++files}.ss`) });
  return {
    [brokerMark]: "file",
    connect: () =>
      broker.connectInProcess({ coordinator: new CountingCoordinator(), clock: systemClock }),
  };
};

async function until(step: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${step}: still waiting after 10 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A named consumer with two workers: two messages settled, two held in handlers, three behind
 * them; then all released and settled.
 */
async function scenario(broker: Broker<ConnectedFileBroker>): Promise<BacklogCounts[]> {
  const events: RuntimeEvent[] = [];
  const entered: string[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const app = new RustStream({ name: "backlog", version: "1.0.0" }).broker(broker, (b) => {
    b.subscriber<string>(new FileStream("orders", { consumer: "svc" }))
      .workers(2)
      .handle(async (m) => {
        entered.push(m);
        if (m.startsWith("hold")) await held;
      });
  });
  app.observe((e) => events.push(e));
  const running = await app.start();
  try {
    const started = events.find(
      (e): e is SubscriptionEvent => e.type === "subscription" && e.state === "started",
    );
    const backlog = started?.backlog;
    if (backlog === undefined) throw new Error("the subscription event carries no backlog");
    const seen: BacklogCounts[] = [await backlog()];
    for (const m of ["done 1", "done 2"]) await running.publish("orders", m);
    await until("two settled", async () => (await backlog()).ready === 0 && entered.length === 2);
    for (const m of ["hold 1", "hold 2", "a", "b", "c"]) await running.publish("orders", m);
    await until("both handlers held", () => entered.length === 4);
    seen.push(await backlog());
    expect(entered).toEqual(["done 1", "done 2", "hold 1", "hold 2"]);
    release();
    await until("all handled", () => entered.length === 7);
    await until("all settled", async () => (await backlog()).ready === 0);
    seen.push(await backlog());
    return seen;
  } finally {
    release();
    await running.stop();
  }
}

/** Nothing at the start; the two held and the three behind them; nothing once all are settled. */
const expected: BacklogCounts[] = [{ ready: 0 }, { ready: 5 }, { ready: 0 }];

describe("a file subscription's backlog", () => {
  test("on a real file: a named consumer's ready counts its stream's messages not settled, handed out or not", async () => {
    expect(await scenario(real())).toEqual(expected);
  });

  test("the in-process stand-in answers the same counts", async () => {
    expect(await scenario(inProcess())).toEqual(expected);
  });

  test("a consumer restarted counts from its stored position; one from the beginning counts the whole stream; an unnamed one answers none", async () => {
    const path = join(dir, `restart-${++files}.ss`);
    const connected = await new FileBroker({ path }).connect();
    try {
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      const te = new TextEncoder();
      for (const m of ["1", "2", "3", "4"])
        await publisher.publish({ name: "orders", payload: te.encode(m) });
      const first = await connected.subscribe(
        new FileStream("orders", { consumer: "svc", start: "beginning" }),
      );
      if (!reportsBacklog(first)) throw new Error("a named consumer must answer its backlog");
      expect(await first.backlog()).toEqual({ ready: 4 });
      const one = await first.next();
      if (one.done) throw new Error("ended");
      await one.value.ack();
      expect(await first.backlog()).toEqual({ ready: 3 });
      await first.close();
      const again = await connected.subscribe(
        new FileStream("orders", { consumer: "svc", start: "beginning" }),
      );
      if (!reportsBacklog(again)) throw new Error("a named consumer must answer its backlog");
      expect(await again.backlog()).toEqual({ ready: 3 });
      await again.close();
      const unnamed = await connected.subscribe(new FileStream("orders", { start: "beginning" }));
      expect(reportsBacklog(unnamed)).toBe(false);
      await unnamed.close();
    } finally {
      await connected.shutdown();
    }
  });
});
