import type { ConnectionChange } from "@ruststream/core";
import { afterEach, describe, expect, it } from "vitest";
import { NatsBroker } from "../src/index.js";
import { eventually } from "./env.live.js";
import { OwnServer } from "./ownServer.js";

// The connection's state from the client's status events, against a server of the test's own:
// stopped, the connection is reconnecting; started again, connected; gone for good past the
// reconnect attempts, lost.

const servers: OwnServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.dispose()));
});

async function ownServer(): Promise<OwnServer> {
  const server = await OwnServer.start();
  servers.push(server);
  return server;
}

describe("connection state", () => {
  it("reconnecting while the server is away, connected once it is back", async () => {
    const server = await ownServer();
    const changes: ConnectionChange[] = [];
    const connected = await new NatsBroker({ servers: server.url, reconnectWaitMs: 100 }).connect({
      onState: (change) => changes.push(change),
    });
    try {
      expect(connected.state).toBe("connected");
      await server.kill();
      await eventually(() => connected.state === "reconnecting", 10_000, "reconnecting");
      await server.restart();
      await eventually(() => connected.state === "connected", 15_000, "connected again");
      expect(changes.map((c) => c.state)).toEqual(["reconnecting", "connected"]);
    } finally {
      await connected.shutdown();
    }
    expect(connected.state).toBe("closed");
  });

  it("lost once the client gives up reconnecting", async () => {
    const server = await ownServer();
    const connected = await new NatsBroker({
      servers: server.url,
      reconnectWaitMs: 50,
      maxReconnectAttempts: 2,
    }).connect();
    try {
      await server.kill();
      await eventually(() => connected.state === "lost", 15_000, "lost");
    } finally {
      await connected.shutdown();
    }
  });
});
