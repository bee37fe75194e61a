import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { afterEach, describe, expect, it } from "vitest";
import { JetStreamSubject, NatsBroker } from "../src/index.js";
import { eventually } from "./env.live.js";
import { OwnServer } from "./ownServer.js";

// A server of the test's own, JetStream on file storage, killed with SIGKILL in the middle of a
// stream an app consumes and started again on its files: every message the stream acknowledged is
// handled, and the app goes on by itself. The server keeps a consumer's acks in memory until it
// writes its state, so what was acked shortly before the kill comes again: at-least-once, each
// message at most twice for one kill.

let server: OwnServer | undefined;
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
  await server?.dispose();
  server = undefined;
});

const total = 300;

describe("a SIGKILL of the server under a consuming app", () => {
  it("loses nothing the stream acknowledged, and the app goes on by itself", async () => {
    server = await OwnServer.start({ jetStream: true });
    const own = server;
    const seen = new Map<number, number>();
    const app = new RustStream({ name: "restart", version: "1.0.0" }).broker(
      new NatsBroker({ servers: own.url, reconnectWaitMs: 100 }),
      (b) => {
        b.subscriber<{ n: number }>(
          new JetStreamSubject("jobs.>", {
            stream: "JOBS",
            durable: "worker",
            ackWaitMs: 2000,
            redeliverTo: "jobs.retry",
            declare: { subjects: ["jobs.>"], storage: "file" },
          }),
        ).handle(async (job) => {
          seen.set(job.n, (seen.get(job.n) ?? 0) + 1);
          await new Promise((resolve) => setTimeout(resolve, 2));
        });
      },
    );
    t = await TestApp.startLive(app, { withinMs: 60_000 });

    // Every message is published until the stream acknowledged it (a publish the kill cut off is
    // tried again once the server is back).
    let storedBeforeKill = 0;
    const nc = await connect({
      servers: own.url,
      reconnectTimeWait: 100,
      maxReconnectAttempts: -1,
    });
    try {
      const js = jetstream(nc, { timeout: 2000 });
      let killed = false;
      for (let n = 0; n < total; n++) {
        for (;;) {
          try {
            await js.publish(`jobs.${n % 7}`, JSON.stringify({ n }));
            break;
          } catch {
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
        if (n === total / 3 && !killed) {
          killed = true;
          await eventually(() => seen.size > 20, 10_000, "the app under way");
          await own.kill();
          storedBeforeKill = n + 1;
          await own.restart();
        }
      }
      await eventually(() => seen.size === total, 45_000, `all ${total} handled`);
    } finally {
      await nc.close();
    }
    expect([...seen.keys()].sort((a, b) => a - b)).toEqual([...Array(total).keys()]);
    expect(Math.max(...seen.values())).toBeLessThanOrEqual(2);
    const twice = [...seen.values()].filter((count) => count > 1).length;
    // At most what the stream held at the kill comes again (the consumer delivered it, and its
    // state since the last write is gone); what was published after it comes once.
    expect(twice).toBeLessThanOrEqual(storedBeforeKill);
    for (let n = storedBeforeKill; n < total; n++) expect(seen.get(n), `message ${n}`).toBe(1);
  }, 90_000);
});
