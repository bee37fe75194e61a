import { type ConnectionChange, RustStreamError } from "@ruststream/core";
import { requireEnv, TcpRelay, uniqueName } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import { PostgresBroker } from "../../src/index.js";
import { waitUntil } from "../support.js";
import { redisCli, relaysOne, startRelayApp, warnings } from "./support.js";

// A relay started in an app (outbox.relayIn) while its outbox connection is already away reports
// that at its start, as the app's background-failure event, without waiting for the connection's
// next change; its return is the app's background-recovered event. On the real PostgreSQL, reached
// through a TCP relay of the test's own: cut (every connection closed, new ones refused) before
// the app starts, restored once it runs; a message written then reaches the shared Redis once.

describe("an outbox relay started while its outbox connection is away, in an app", () => {
  it("reports the connection away as the app starts, then its return, and relays once it is back", async () => {
    const url = requireEnv("POSTGRES_URL");
    const redisUrl = requireEnv("REDIS_URL");
    const server = new URL(url);
    const proxy = new TcpRelay({ host: server.hostname, port: Number(server.port || 5432) });
    await proxy.start();
    const label = uniqueName("events");
    const name = uniqueName("orders");
    const changes: ConnectionChange[] = [];
    const outbox = await new PostgresBroker({
      url: proxy.url(url),
      ensureSchema: true,
    }).connectOutbox({ onState: (change) => changes.push(change) });
    let relayApp: Awaited<ReturnType<typeof startRelayApp>> | undefined;
    try {
      await proxy.cut();
      await waitUntil(20_000, "the outbox connection away", () =>
        changes.some((c) => c.state === "reconnecting"),
      );
      const { logger } = warnings();
      relayApp = await startRelayApp(outbox, { redisUrl, label, name, logger });
      const { running, failures, background, published } = relayApp;
      // As start() resolves, the relay (started in afterStartup) has told the loss already.
      expect(failures.length).toBeGreaterThanOrEqual(1);
      expect(failures[0]).toMatchObject({
        type: "background-failure",
        source: `outbox:${label}`,
      });
      expect(failures[0]?.error).toBeInstanceOf(RustStreamError);
      expect(failures[0]?.error).toMatchObject({
        code: "broker-failure",
        message: expect.stringContaining("the outbox connection is reconnecting"),
      });

      await proxy.restore();
      await waitUntil(20_000, "the return reported", () =>
        background.some((e) => e.type === "background-recovered"),
      );
      await relaysOne(url, outbox, { redisUrl, label, name }, "once it is back");
      await running.stop();
      // The losses first (one per change of the connection to away), then their end, once.
      expect(background).toEqual([
        ...failures,
        { type: "background-recovered", source: `outbox:${label}` },
      ]);
      expect(published.map((e) => e.ok)).toEqual([true]);
    } finally {
      await relayApp?.running.stop();
      await outbox.close();
      await proxy.cut();
      await redisCli(redisUrl, "DEL", name);
    }
  });
});
