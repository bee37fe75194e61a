import { bytes as bytesCodec, type RunningApp, RustStream } from "@ruststream/core";
import { brokers, bytes, sleep, text, uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, describe, expect, it } from "vitest";
import { KafkaBroker, KafkaPublish, KafkaTopic } from "../src/index.js";

// Failover on a real three-node KRaft cluster (tooling/brokers' kafka-cluster; this file alone
// starts it, and stops it at its end: three JVMs are too dear to keep for every run). A service
// (an app under `tracked`, four lanes by partition) consumes keyed records from a topic replicated
// on all three nodes, published with acks=all by an idempotent producer, while the node leading
// one of its partitions is killed with SIGKILL: the cluster moves the leadership to a replica in
// sync, producer and service find it by themselves, and nothing is lost: every record is handled,
// none is written twice, and the group's committed offsets reach the end of every partition. The
// app is never restarted. The killed node is started again at the end and rejoins every ISR.

const cluster = brokers["kafka-cluster"];
const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

// Started by the first test that needs it (a failing beforeAll would report the tests skipped);
// each test's `up` also starts a node an earlier failed test left dead.
let startedHere = false;
afterAll(async () => {
  // Stopped only if this file started it: someone's `pnpm brokers up kafka-cluster` stays up.
  if (startedHere) await cluster.down(log);
}, 120_000);

// kafkajs's idempotent producer has one request in flight: a few hundred records take seconds.
const TOTAL = 600;
const BATCH = 20;
const KEYS = 13;
const PARTITIONS = 3;
// The partition whose leader dies.
const VICTIM_PARTITION = 0;

async function eventually(
  what: string,
  ms: number,
  condition: () => boolean,
  state: () => string = () => "",
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms: ${what} ${state()}`);
    await sleep(20);
  }
}

/** What each engine calls an idempotent producer that waits for every replica in sync. */
const idempotent = {
  librdkafka: { "enable.idempotence": true, acks: "all" },
  // kafkajs sends acks=-1 (all) unless told otherwise; idempotence allows it one request in flight.
  kafkajs: { idempotent: true, maxInFlightRequests: 1 },
} as const;

for (const engine of ["librdkafka", "kafkajs"] as const) {
  describe(`${engine}: a three-node cluster whose partition leader is killed mid-stream`, () => {
    it("the service goes on by itself and loses nothing under tracked", async () => {
      const t0 = Date.now();
      // Each step's time in the log: where a slow CI run spent it.
      const mark = (what: string): void =>
        log(`[cluster] ${engine}: ${what} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      await cluster.exclusive(async () => {
        if (!(await cluster.up(log)).already) startedHere = true;
        mark("cluster up");
        const address = cluster.bootstrap();
        const topic = uniqueName(`cluster-${engine}`);
        const group = `g-${topic}`;

        // id -> the partition it was handled from, and the ids handled once the node was dead.
        const handled = new Map<string, number>();
        const afterKill: Array<{ id: string; partition: number }> = [];
        let killed = false;
        const app = new RustStream({ name: group, version: "1.0.0" }).broker(
          new KafkaBroker({ brokers: address, engine }),
          (b) => {
            b.subscriber(
              new KafkaTopic(topic, {
                group,
                commit: "tracked",
                start: "earliest",
                create: { partitions: PARTITIONS, replicationFactor: 3 },
              }),
              { codec: bytesCodec },
            )
              .workers(4, { key: "partition" })
              .handle(async (payload, ctx) => {
                const id = text(payload as Uint8Array);
                const partition = ctx.delivery.partition ?? -1;
                handled.set(id, partition);
                if (killed) afterKill.push({ id, partition });
              });
          },
        );
        const running: RunningApp = await app.start();
        const producer = await new KafkaBroker({ brokers: address, engine }).connect();
        try {
          mark("app started");
          const before = await cluster.describeTopic(topic, { isr: 3, timeoutMs: 60_000 });
          expect(before.map((p) => p.isr.length)).toEqual([3, 3, 3]);
          const victim = before.find((p) => p.partition === VICTIM_PARTITION)?.leader ?? -1;
          expect(victim, "partition 0 has a leader").toBeGreaterThan(0);

          const publisher = await new KafkaPublish({ config: idempotent[engine] }).pair(producer);
          let kill: () => void = () => {};
          const killDone = new Promise<void>((resolve) => {
            kill = resolve;
          });
          const receipts: string[] = [];
          const publishing = (async () => {
            for (let i = 0; i < TOTAL; i += BATCH) {
              // Half the stream goes out after the kill, whenever the kill comes.
              if (i === TOTAL / 2) await killDone;
              const batch = [...Array(BATCH).keys()].map((j) =>
                publisher.publish({
                  name: topic,
                  payload: bytes(`m${i + j}`),
                  partitionKey: `k${(i + j) % KEYS}`,
                }),
              );
              for (const receipt of await Promise.all(batch))
                receipts.push(String(receipt.position));
            }
          })();
          // Awaited at the end; a publish refused meanwhile fails the waits below at once, and is
          // never left as an unhandled rejection.
          let publishFailure: unknown;
          publishing.catch((error: unknown) => {
            publishFailure = error ?? new Error("a publish failed");
          });
          const published = (): boolean => {
            if (publishFailure !== undefined) throw publishFailure;
            return true;
          };

          // Mid-stream: a fifth handled, the rest published or on its way.
          await eventually(
            "a fifth of the stream handled",
            60_000,
            () => published() && handled.size >= TOTAL / 5,
          );
          await cluster.killNode(victim);
          killed = true;
          kill();
          mark(`node ${victim}, leader of partition 0, killed`);

          // The cluster's view while the node is down: partition 0 led by another node, the dead
          // one out of every ISR.
          const during = await cluster.describeTopic(topic, {
            isr: 2,
            without: victim,
            timeoutMs: 60_000,
          });
          mark("the cluster fenced it");
          const all = [...Array(TOTAL).keys()].map((i) => `m${i}`);
          await eventually(
            "every published id handled",
            120_000,
            () => published() && all.every((id) => handled.has(id)),
            () =>
              `(${receipts.length} publishes confirmed, ${handled.size} ids handled, ${afterKill.length} after the kill; partitions handled after it: ${[...new Set(afterKill.map((h) => h.partition))].join(",")})`,
          );
          mark("every id handled");
          await publishing;

          expect(
            all.filter((id) => !handled.has(id)),
            "ids never handled",
          ).toEqual([]);
          expect(receipts.length, "every publish confirmed").toBe(TOTAL);
          const partition0 = during.find((p) => p.partition === VICTIM_PARTITION);
          expect(partition0?.leader, "a new leader for partition 0").not.toBe(victim);
          expect(partition0?.leader, "a new leader for partition 0").toBeGreaterThan(0);
          for (const p of during)
            expect(p.isr, `ISR of partition ${p.partition}`).not.toContain(victim);
          expect(
            afterKill.filter((h) => h.partition === VICTIM_PARTITION).length,
            "records of the partition whose leader died handled after it died",
          ).toBeGreaterThan(0);
          expect(running.state, "the app kept running, never restarted").toBe("ready");

          // Committed offsets reach the end of every partition, and the ends add up to what was
          // published: the idempotent producer's retries across the failover wrote nothing twice.
          // The killed node starts again meanwhile (in parallel: each costs a JVM start).
          const [offsets] = await Promise.all([
            cluster.committedOffsets(group, topic, { timeoutMs: 60_000 }),
            cluster.startNode(victim).then(() => mark(`node ${victim} restarted`)),
          ]);
          mark("offsets committed");
          expect(offsets.map((o) => o.committed)).toEqual(offsets.map((o) => o.end));
          expect(offsets.reduce((sum, o) => sum + o.end, 0)).toBe(TOTAL);

          // The killed node is back and caught up: in sync again everywhere.
          const after = await cluster.describeTopic(topic, { isr: 3, timeoutMs: 90_000 });
          mark("every ISR whole again");
          for (const p of after) expect(p.isr, `ISR of partition ${p.partition}`).toContain(victim);
          expect(running.state).toBe("ready");
        } finally {
          await producer.shutdown();
          await running.stop();
        }
        const report = await running.stopped;
        expect(report.failed, String(report.failure)).toBe(false);
      });
    }, 300_000);
  });
}
