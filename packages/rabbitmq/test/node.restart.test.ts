import { randomUUID } from "node:crypto";
import { type ConnectionChange, isRustStreamError } from "@ruststream/core";
import { brokers, requireEnv } from "@ruststream/tooling-testkit/brokers";
import { describe, expect, it } from "vitest";
import { RabbitBroker, RabbitQueue } from "../src/index.js";

// Restarts the one RabbitMQ node every project's live tests share: the restarts group
// (vitest.restart.config.ts), alone on the node (exclusive).

describe("the node killed and restarted mid-stream (real node)", () => {
  it(
    "loses nothing confirmed, and the service goes on by itself",
    () =>
      brokers.rabbitmq.exclusive(async () => {
        const states: string[] = [];
        const connected = await new RabbitBroker({
          url: requireEnv("RABBITMQ_URL"),
          declare: true,
          waitForConnectionMs: 60_000,
          reconnect: { initialMs: 100, maxMs: 1000 },
        }).connect({ onState: (change: ConnectionChange) => states.push(change.state) });
        const queue = `restart-${randomUUID().slice(0, 8)}`;
        try {
          // A classic durable queue: the server confirms a persistent message once it is on disk.
          const subscription = await connected.subscribe(new RabbitQueue(queue, { prefetch: 50 }));
          const publisher = await connected.defaultPublishPolicy().pair(connected);
          const received = new Set<string>();
          const consuming = (async () => {
            for await (const d of subscription) {
              received.add(new TextDecoder().decode(d.payload));
              // A delivery of the channel the crash took comes again on the new one.
              await Promise.resolve(d.ack()).catch((e) => {
                if (!isRustStreamError(e, "broker-failure")) throw e;
              });
              if (received.size === 400) return;
            }
          })();
          const confirmed: string[] = [];
          let restarted: Promise<void> | undefined;
          for (let i = 0; i < 400; i++) {
            const body = `m${i}`;
            // Not confirmed before the crash: the service publishes it again, as a caller would.
            for (;;) {
              const ok = await publisher
                .publish({ name: queue, payload: new TextEncoder().encode(body) })
                .then(
                  () => true,
                  (e) => {
                    if (!isRustStreamError(e, "broker-failure")) throw e;
                    return false;
                  },
                );
              if (ok) break;
            }
            confirmed.push(body);
            if (i === 150) restarted = brokers.rabbitmq.restart({ hard: true });
          }
          await restarted;
          await consuming;
          expect(confirmed.filter((b) => !received.has(b))).toEqual([]);
          expect(states).toContain("reconnecting");
          expect(connected.state).toBe("connected");
          await subscription.close();
        } finally {
          await connected.shutdown();
        }
      }),
    180_000,
  );
});
