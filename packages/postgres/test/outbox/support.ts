import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer } from "node:net";
import { promisify } from "node:util";
import type { BatchSubscription, Delivery } from "@ruststream/core";
import { waitUntil } from "../support.js";

const run = promisify(execFile);

/** A port nothing listens on now (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** One command through redis-cli, answered as its text. */
export async function redisCli(url: string, ...args: string[]): Promise<string> {
  const { stdout } = await run("redis-cli", ["-u", url, ...args]);
  return stdout.trim();
}

/**
 * A Redis server of the test's own, on its own port (the shared one is never stopped or
 * reconfigured), started refusing every write (`min-replicas-to-write 1` with no replica: each
 * XADD answers NOREPLICAS), the state of a broker that does not take messages; `accept()` lets it
 * take them.
 */
export async function refusingRedis(): Promise<{
  readonly url: string;
  accept(): Promise<void>;
  stop(): Promise<void>;
}> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--min-replicas-to-write",
      "1",
    ],
    { stdio: "ignore" },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await waitUntil(10_000, "the test's own redis-server answering", () =>
    redisCli(url, "PING").then(
      (answer) => answer === "PONG",
      () => false,
    ),
  );
  return {
    url,
    accept: async () => {
      await redisCli(url, "CONFIG", "SET", "min-replicas-to-write", "0");
    },
    stop: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Reads `n` deliveries, acking each, within `ms`. */
export async function take(
  subscription: BatchSubscription<Delivery>,
  n: number,
  ms = 20_000,
): Promise<Delivery[]> {
  const got: Delivery[] = [];
  const deadline = Date.now() + ms;
  while (got.length < n) {
    if (Date.now() > deadline) throw new Error(`took ${got.length} of ${n} after ${ms} ms`);
    const batch = await subscription.nextBatch(n - got.length);
    for (const delivery of batch) {
      got.push(delivery);
      await delivery.ack();
    }
  }
  return got;
}
