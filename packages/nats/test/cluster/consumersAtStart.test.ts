import { type JetStreamManager, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { RustStream, RustStreamError } from "@ruststream/core";
import { TestApp } from "@ruststream/testing";
import { brokers, requireEnv, uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { JetStreamSubject, NatsBroker, type NatsBrokerOptions } from "../../src/index.js";
import { eventually } from "../env.live.js";

// On the three-node cluster, apps that make their replicated durable consumers at their start (as
// a service does on its first deployment) while JetStream's meta leader, which answers creations,
// has just been SIGKILLed: until another node leads, a creation times out or is answered "JetStream
// system temporarily unavailable" (10008), and a consumer looked up right after its creation can
// be answered "consumer not found" (10014) by a replica whose Raft group for it has not formed.

const cluster = brokers["nats-cluster"];
const PARTITIONS = 8;
const started: TestApp[] = [];
afterEach(async () => {
  for (const t of started.splice(0)) await t.stop();
});

/** An app with a durable pull consumer per partition of `stream`, as the chaos services have. */
function partitionedApp(stream: string, options: Partial<NatsBrokerOptions>, seen: Set<string>) {
  return new RustStream({ name: "start", version: "1.0.0" }).broker(
    new NatsBroker({
      servers: requireEnv("NATS_CLUSTER_SERVERS").split(","),
      reconnectWaitMs: 100,
      ...options,
    }),
    (b) => {
      for (let p = 0; p < PARTITIONS; p++) {
        b.subscriber<{ p: number }>(
          new JetStreamSubject(`${stream}.${p}`, {
            stream,
            durable: `${stream}-p${p}`,
            ackWaitMs: 5000,
            maxAckPending: 1,
          }),
        ).handle(async (message) => {
          seen.add(`p${message.p}`);
        });
      }
    },
  );
}

/** The stream, replicated on all three nodes, once it is led and both followers are current. */
async function replicatedStream(jsm: JetStreamManager, stream: string): Promise<string> {
  await jsm.streams.add({
    name: stream,
    subjects: [`${stream}.*`],
    storage: "file",
    num_replicas: 3,
  });
  let leader = "";
  await eventually(
    async () => {
      const info = (await jsm.streams.info(stream)).cluster;
      leader = info?.leader ?? "";
      return leader !== "" && (info?.replicas ?? []).filter((r) => r.current).length === 2;
    },
    30_000,
    "the stream led and in sync",
  );
  return leader;
}

/**
 * Makes sure the meta leader leads nothing of `stream`, so killing it leaves the stream's lookups
 * answered and only creations wait (a stream leader asked to step down until another node leads).
 */
async function streamLedApartFromMeta(nc: NatsConnection, jsm: JetStreamManager, stream: string) {
  for (;;) {
    const meta = await cluster.metaLeader();
    const leader = (await jsm.streams.info(stream)).cluster?.leader;
    if (
      meta !== undefined &&
      leader !== undefined &&
      leader !== "" &&
      cluster.nodeOf(leader) !== meta
    )
      return meta;
    await nc
      .request(`$JS.API.STREAM.LEADER.STEPDOWN.${stream}`, undefined, { timeout: 5000 })
      .catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function withCluster<T>(
  work: (nc: NatsConnection, jsm: JetStreamManager, stream: string) => Promise<T>,
) {
  return cluster.exclusive(async () => {
    const servers = requireEnv("NATS_CLUSTER_SERVERS").split(",");
    const nc = await connect({ servers, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
    const jsm = await jetstreamManager(nc);
    const stream = uniqueName("start");
    try {
      return await work(nc, jsm, stream);
    } finally {
      for (const t of started.splice(0)) await t.stop();
      await jsm.streams.delete(stream).catch(() => undefined);
      await nc.close();
    }
  });
}

describe("replicated durable consumers made at an app's start", () => {
  it("two apps start while the meta leader is killed, once another node leads, and consume", () =>
    withCluster(async (nc, jsm, stream) => {
      await replicatedStream(jsm, stream);
      const meta = await cluster.metaLeader();
      expect(meta, "the cluster has a meta leader").toBeDefined();
      await cluster.killNode(meta as number);
      try {
        // Both apps make the same eight consumers at once, as two replicas of a service do, with
        // the API's default time (5 s) for each call.
        const seen = new Set<string>();
        const apps = await Promise.all(
          [0, 1].map(() =>
            TestApp.startLive(partitionedApp(stream, {}, seen), { withinMs: 90_000 }),
          ),
        );
        started.push(...apps);
        const js = jetstream(nc, { timeout: 5000 });
        for (let p = 0; p < PARTITIONS; p++) {
          await eventually(
            () =>
              js.publish(`${stream}.${p}`, JSON.stringify({ p })).then(
                () => true,
                () => false,
              ),
            30_000,
            `partition ${p}'s message stored`,
          );
        }
        await eventually(
          () => seen.size === PARTITIONS,
          30_000,
          "every partition's message handled",
        );
        for (let p = 0; p < PARTITIONS; p++) {
          const info = await jsm.consumers.info(stream, `${stream}-p${p}`);
          expect(info.cluster?.replicas?.length, `consumer p${p} replicated on three nodes`).toBe(
            2,
          );
        }
      } finally {
        await cluster.startNode(meta as number);
      }
    }));

  it("past apiRetryWithinMs, the start fails naming the consumer, its stream and what to check", () =>
    withCluster(async (nc, jsm, stream) => {
      await replicatedStream(jsm, stream);
      const meta = await streamLedApartFromMeta(nc, jsm, stream);
      await cluster.killNode(meta);
      try {
        // Nobody leads the meta group for seconds (a new election): longer than this app waits.
        const app = partitionedApp(
          stream,
          { apiTimeoutMs: 500, apiRetryWithinMs: 1000 },
          new Set(),
        );
        const failure = await TestApp.startLive(app, { withinMs: 60_000 }).then(
          (t) => {
            started.push(t);
            return undefined;
          },
          (error: unknown) => error,
        );
        const error = rootOf(failure);
        expect(error).toBeInstanceOf(RustStreamError);
        expect((error as RustStreamError).code).toBe("broker-failure");
        expect(String((error as Error).message)).toMatch(
          new RegExp(
            `creating the consumer "${stream}-p\\d" on the JetStream stream "${stream}": the JetStream API still failed after \\d+ tries`,
          ),
        );
        expect(String((error as Error).message)).toMatch(
          /Check that the cluster has a JetStream meta leader/,
        );
      } finally {
        await cluster.startNode(meta);
      }
    }));

  it("a stream that is not there, without declare, is refused at once, never retried", () =>
    withCluster(async (_nc, _jsm, stream) => {
      // Retried, this start would outlast the test's own time: the refusal comes first.
      const app = partitionedApp(stream, { apiRetryWithinMs: 600_000 }, new Set());
      const failure = await TestApp.startLive(app, { withinMs: 60_000 }).then(
        (t) => {
          started.push(t);
          return undefined;
        },
        (error: unknown) => error,
      );
      const error = rootOf(failure);
      expect((error as RustStreamError).code).toBe("invalid-argument");
      expect(String((error as Error).message)).toContain(
        `the JetStream stream "${stream}" does not exist`,
      );
    }));
});

/** The innermost RustStreamError of a start's failure: the subscription's, under the runtime's. */
function rootOf(error: unknown): unknown {
  let found: unknown = error;
  for (let at = error; at instanceof Error; at = at.cause)
    if (at instanceof RustStreamError) found = at;
  return found;
}
