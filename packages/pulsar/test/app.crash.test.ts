import { fileURLToPath } from "node:url";
import {
  bytes,
  type ChildService,
  killServices,
  requireEnv,
  startService,
  uniqueName,
} from "@ruststream/tooling-testkit";
import { afterAll, describe, expect, it } from "vitest";
import { PulsarBroker } from "../src/index.js";
import { eventually, topicStats } from "./env.js";

// The service as deployed: a process running app.run() (fixtures/appConsumer.ts) on a Shared
// subscription. One is killed with SIGKILL mid-stream; the broker gives what it held unacked to the
// next process of the same service, which finishes: every message handled, none lost.

const fixture = fileURLToPath(new URL("./fixtures/appConsumer.ts", import.meta.url));
const cwd = fileURLToPath(new URL("..", import.meta.url));
afterAll(killServices);

function service(url: string, topic: string, handled: string[]): Promise<ChildService> {
  return startService({
    fixture,
    args: [url, topic],
    cwd,
    onLine: (line) => handled.push(line),
  });
}

const payloads = (total: number): string[] => [...Array(total).keys()].map((i) => `m${i}`).sort();

describe("a service process killed mid-stream", () => {
  it("Shared: a second process of the app gets what the first held unacked, and finishes", async () => {
    const url = requireEnv("PULSAR_URL");
    const topic = uniqueName("app-crash");
    const total = 600;
    const byFirst: string[] = [];
    const first = await service(url, topic, byFirst);
    const producer = await new PulsarBroker({ url }).connect();
    try {
      const publisher = await producer.defaultPublishPolicy().pair(producer);
      await Promise.all(
        [...Array(total).keys()].map((i) =>
          publisher.publish({ name: topic, payload: bytes(`m${i}`) }),
        ),
      );
      // Killed under way, holding messages pushed and not yet acked (four lanes, 2 ms each).
      await eventually(() => byFirst.length >= 100, 20_000, "the first process under way");
      first.child.kill("SIGKILL");
      expect(await first.exited).toBe(null);
      const stopped = byFirst.length;
      expect(stopped).toBeLessThan(total);
      const bySecond: string[] = [];
      const second = await service(url, topic, bySecond);
      const handled = () => new Set([...byFirst, ...bySecond]);
      await eventually(() => handled().size === total, 30_000, "every message handled");
      expect([...handled()].sort()).toEqual(payloads(total));
      // The backlog is empty once the second process acked what it handled.
      await eventually(
        async () => (await topicStats(topic)).subscriptions["crash-app"]?.msgBacklog === 0,
        15_000,
        "the subscription's backlog acknowledged",
      );
      second.child.kill("SIGTERM");
      expect(await second.exited).toBe(0);
    } finally {
      await producer.shutdown();
    }
  }, 90_000);
});
