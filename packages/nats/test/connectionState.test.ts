import { type ChildProcess, spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import type { ConnectionChange } from "@ruststream/core";
import { ensureNatsServer } from "@ruststream/tooling-testkit";
import { afterEach, describe, expect, it } from "vitest";
import { NatsBroker } from "../src/index.js";
import { eventually } from "./env.live.js";

// The connection's state from the client's status events, against a server of the test's own (on
// a port of its own, never the shared one): stopped, the connection is reconnecting; started
// again, connected; gone for good past the reconnect attempts, lost.

const servers: ChildProcess[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.kill("SIGKILL");
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function startServer(port: number): Promise<ChildProcess> {
  const binary = await ensureNatsServer(() => {});
  const child = spawn(binary, ["-a", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
  servers.push(child);
  await eventually(
    () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
      }),
    10_000,
    "the test's own server",
  );
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

describe("connection state", () => {
  it("reconnecting while the server is away, connected once it is back", async () => {
    const port = await freePort();
    let server = await startServer(port);
    const changes: ConnectionChange[] = [];
    const connected = await new NatsBroker({
      servers: `nats://127.0.0.1:${port}`,
      reconnectWaitMs: 100,
    }).connect({
      onState: (change) => changes.push(change),
    });
    try {
      expect(connected.state).toBe("connected");
      await stop(server);
      await eventually(() => connected.state === "reconnecting", 10_000, "reconnecting");
      server = await startServer(port);
      await eventually(() => connected.state === "connected", 15_000, "connected again");
      expect(changes.map((c) => c.state)).toEqual(["reconnecting", "connected"]);
    } finally {
      await connected.shutdown();
    }
    expect(connected.state).toBe("closed");
  });

  it("lost once the client gives up reconnecting", async () => {
    const port = await freePort();
    const server = await startServer(port);
    const connected = await new NatsBroker({
      servers: `nats://127.0.0.1:${port}`,
      reconnectWaitMs: 50,
      maxReconnectAttempts: 2,
    }).connect();
    try {
      await stop(server);
      await eventually(() => connected.state === "lost", 15_000, "lost");
    } finally {
      await connected.shutdown();
    }
  });
});
