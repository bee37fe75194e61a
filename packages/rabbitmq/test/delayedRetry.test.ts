import { randomUUID } from "node:crypto";
import { headerNames } from "@ruststream/core";
import { killServices, requireEnv, startService } from "@ruststream/tooling-testkit";
import { afterAll, describe, expect, it } from "vitest";
import { RabbitBroker, RabbitQueue } from "../src/index.js";

afterAll(killServices);

describe("a delayed retry (real node)", () => {
  it("survives the service killed with SIGKILL during the delay: the server holds it, not the process", async () => {
    const url = requireEnv("RABBITMQ_URL");
    const queue = `delayed-${randomUUID().slice(0, 8)}`;
    const delayMs = 1500;
    const lines: string[] = [];
    const service = await startService({
      fixture: new URL("./fixtures/parkThenHang.ts", import.meta.url).pathname,
      args: [url, queue, String(delayMs)],
      cwd: new URL("..", import.meta.url).pathname,
      onLine: (line) => lines.push(line),
    });
    const connected = await new RabbitBroker({ url, declare: true }).connect();
    try {
      const publisher = await connected.defaultPublishPolicy().pair(connected);
      await publisher.publish({ name: queue, payload: new TextEncoder().encode("survivor") });
      while (!lines.some((l) => l.startsWith("parked")))
        await new Promise((r) => setTimeout(r, 10));
      const parkedAt = Date.now();
      expect(lines).toContain("parked ok");
      service.child.kill("SIGKILL");
      expect(await service.exited).toBe(null);
      const subscription = await connected.subscribe(
        new RabbitQueue(queue, { arguments: { "x-expires": 120_000 } }),
      );
      const back = (await subscription.next()).value;
      // Back through the wait queue's TTL, no sooner than the delay, counted as a second attempt.
      expect(Date.now() - parkedAt).toBeGreaterThanOrEqual(delayMs - 100);
      expect(new TextDecoder().decode(back?.payload)).toBe("survivor");
      expect(back?.headers.getString(headerNames.retryCount)).toBe("1");
      await back?.ack();
      await subscription.close();
    } finally {
      await connected.shutdown();
    }
  }, 60_000);
});
