import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { RustStream } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { brokers, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { JetStreamSubject, NatsBroker } from "../../src/index.js";
import { eventually } from "../env.live.js";

// On the three-node cluster, a stream replicated on all three (file storage): its leader killed
// with SIGKILL in the middle of the stream an app consumes. Nothing the stream acknowledged is
// lost, and the app goes on by itself once another node leads; the node then comes back.

const cluster = brokers["nats-cluster"];
let t: TestApp | undefined;
afterEach(async () => {
  await t?.stop();
  t = undefined;
});

const total = 300;

describe("the stream leader killed mid-stream", () => {
  it("loses nothing acknowledged, and the app goes on by itself", () =>
    cluster.exclusive(async () => {
      const servers = requireEnv("NATS_CLUSTER_SERVERS").split(",");
      const subject = uniqueName("leader");
      const seen = new Map<number, number>();
      const app = new RustStream({ name: "leader", version: "1.0.0" }).broker(
        new NatsBroker({ servers, reconnectWaitMs: 100 }),
        (b) => {
          b.subscriber<{ n: number }>(
            new JetStreamSubject(subject, {
              stream: subject,
              durable: "worker",
              ackWaitMs: 2000,
              declare: { subjects: [subject], storage: "file", replicas: 3 },
            }),
          ).handle(async (job) => {
            seen.set(job.n, (seen.get(job.n) ?? 0) + 1);
            await new Promise((resolve) => setTimeout(resolve, 2));
          });
        },
      );
      t = await TestApp.startLive(app, { withinMs: 60_000 });

      const nc = await connect({ servers, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
      let killed: number | undefined;
      try {
        const js = jetstream(nc, { timeout: 2000 });
        const jsm = await jetstreamManager(nc);
        for (let n = 0; n < total; n++) {
          // Published until the stream acknowledged it: one the kill cut off is tried again.
          for (;;) {
            try {
              await js.publish(subject, JSON.stringify({ n }));
              break;
            } catch {
              await new Promise((resolve) => setTimeout(resolve, 100));
            }
          }
          if (n === total / 3) {
            await eventually(() => seen.size > 20, 15_000, "the app under way");
            const leader = (await jsm.streams.info(subject)).cluster?.leader;
            expect(leader, "the stream has a leader").toBeDefined();
            killed = cluster.nodeOf(leader as string);
            await cluster.killNode(killed);
          }
        }
        await eventually(() => seen.size === total, 60_000, `all ${total} handled`);
        const after = (await jsm.streams.info(subject)).cluster?.leader;
        expect(after && cluster.nodeOf(after)).not.toBe(killed);
        await jsm.streams.delete(subject).catch(() => undefined);
      } finally {
        await nc.close();
        if (killed !== undefined) await cluster.startNode(killed);
      }
      expect([...seen.keys()].sort((a, b) => a - b)).toEqual([...Array(total).keys()]);
    }));
});
