import { fileURLToPath } from "node:url";
import {
  bytes,
  type ChildService,
  killServices,
  requireEnv,
  sleep,
  startService,
  uniqueName,
} from "@ruststream/tooling-testkit";
import { afterAll, describe, expect, it } from "vitest";
import { KafkaBroker } from "../src/index.js";

// The service as deployed: a process running app.run() (fixtures/appService.ts) under `tracked`.
// It is killed with SIGKILL mid-stream, with handlers running and settles not yet committed, and
// started again: the restarted process picks up from the group's committed positions, and nothing
// is lost (what the first handled after its last commit comes again, which at-least-once allows).

const fixture = fileURLToPath(new URL("./fixtures/appService.ts", import.meta.url));
const cwd = fileURLToPath(new URL("..", import.meta.url));
afterAll(killServices);

function service(topic: string, engine: string, handled: string[]): Promise<ChildService> {
  return startService({
    fixture,
    args: [requireEnv("KAFKA_BROKERS"), topic, engine],
    cwd,
    onLine: (line) => handled.push(line),
  });
}

async function eventually(what: string, ms: number, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms: ${what}`);
    await sleep(20);
  }
}

for (const engine of ["librdkafka", "kafkajs"] as const) {
  describe(`${engine}: a service process killed with SIGKILL mid-stream`, () => {
    it("restarted, it loses nothing under tracked", async () => {
      const topic = uniqueName(`crash-${engine}`);
      const total = 600;
      const byFirst: string[] = [];
      const first = await service(topic, engine, byFirst);
      const producer = await new KafkaBroker({ brokers: requireEnv("KAFKA_BROKERS") }).connect();
      try {
        const publisher = await producer.defaultPublishPolicy().pair(producer);
        const publishing = (async () => {
          for (let i = 0; i < total; i++) {
            await publisher.publish({
              name: topic,
              payload: bytes(`m${i}`),
              partitionKey: `k${i % 7}`,
            });
            if (i % 50 === 49) await sleep(50);
          }
        })();
        // Killed under way: handlers running, settles not yet committed.
        await eventually("the first process under way", 60_000, () => byFirst.length >= 150);
        first.child.kill("SIGKILL");
        await first.exited;
        const killedAt = byFirst.length;
        await publishing;
        const bySecond: string[] = [];
        const second = await service(topic, engine, bySecond);
        const all = [...Array(total).keys()].map((i) => `m${i}`);
        const handled = () => new Set([...byFirst, ...bySecond]);
        await eventually("every record handled by one process or the other", 90_000, () =>
          all.every((m) => handled().has(m)),
        );
        expect(killedAt, "the first was killed part way").toBeLessThan(total);
        expect(all.filter((m) => !handled().has(m))).toEqual([]);
        // A clean stop of the restarted service: SIGTERM drains and exits 0.
        second.child.kill("SIGTERM");
        expect(await second.exited).toBe(0);
      } finally {
        await producer.shutdown();
      }
    }, 240_000);
  });
}
