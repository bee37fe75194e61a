// A Redis server stopped under a running app and started again: readiness and the connection-state
// series follow it. The server is one of the test's own (on a free port, its data in a temporary
// folder), so no other test loses the shared ones.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { RuntimeEvent } from "@ruststream/core";
import { RedisBroker, RedisStream } from "@ruststream/redis";
import { uniqueName } from "@ruststream/tooling-testkit";
import { afterEach, expect, test } from "vitest";
import { expectRecovery, only, poll, serve, subscribedApp } from "./outage.js";

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * `redis-server` on `port`, keeping its data in `dir` across its restarts (the append-only file,
 * written on every command), so the stream and its group are there when it comes back.
 */
class OwnRedis {
  readonly #port: number;
  readonly #dir: string;
  #process: ChildProcess | undefined;

  constructor(port: number, dir: string) {
    this.#port = port;
    this.#dir = dir;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.#port}`;
  }

  /** Starts it; resolves once it says it accepts connections. */
  async start(): Promise<void> {
    const child = spawn(
      "redis-server",
      [
        "--port",
        String(this.#port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--dir",
        this.#dir,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    this.#process = child;
    let output = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on("data", (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes("Ready to accept connections")) resolve();
      });
      child.once("error", reject);
      child.once("exit", (code) =>
        reject(new Error(`redis-server exited (${code}) before it served:\n${output}`)),
      );
    });
  }

  /** Runs a command on it through `redis-cli`, as an operator would; answers its reply. */
  async cli(...args: string[]): Promise<string> {
    const { stdout } = await promisify(execFile)("redis-cli", ["-p", String(this.#port), ...args]);
    return stdout.trim();
  }

  /** Stops it (SIGTERM, a clean shutdown); resolves once the process is gone. */
  async stop(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
}

let server: OwnRedis | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.stop();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  server = undefined;
  dir = undefined;
});

/** The app on `own`'s server: one subscriber on a new stream, recording what it handles. */
function streamApp(own: OwnRedis) {
  const stream = uniqueName("outage");
  return {
    stream,
    ...subscribedApp(
      new RedisBroker({ url: own.url }),
      new RedisStream(stream, { blockMs: 200 }),
      stream,
    ),
  };
}

async function ownServer(): Promise<OwnRedis> {
  dir = mkdtempSync(join(tmpdir(), "rs-outage-redis-"));
  server = new OwnRedis(await freePort(), dir);
  await server.start();
  return server;
}

test("redis: its server stopped, the app is not ready and the series says reconnecting; started again, both recover and a message is handled", async () => {
  const own = await ownServer();
  const seen = await expectRecovery({
    ...streamApp(own),
    broker: "redis",
    outage: async (whileDown) => {
      await own.stop();
      try {
        await whileDown();
      } finally {
        await own.start();
      }
    },
    deadlineMs: 30_000,
  });
  // Reconnecting is the client's own work: the app stays live (expectRecovery), and the reason is
  // the client's.
  expect(seen.during.ready.body.why).toEqual([
    `broker redis is reconnecting: the connection to Redis at ${own.url.slice("redis://".length)} closed`,
  ]);
});

test("redis: the server refuses the client's login when it reconnects: lost, not live either; let in again, both recover", async () => {
  const own = await ownServer();
  const { app, stream, handled } = streamApp(own);
  const http = await serve(app);
  const running = await app.start();
  try {
    // A password set on the server holds up no connection already in; its clients cut, every one
    // of the app's reconnects and is refused.
    expect(await own.cli("CONFIG", "SET", "requirepass", "rotated")).toBe("OK");
    await own.cli("-a", "rotated", "--no-auth-warning", "CLIENT", "KILL", "TYPE", "normal");
    const lost = await poll(
      http,
      "redis",
      "redis lost",
      30_000,
      (seen) => seen.ready.status === 503 && seen.live.status === 503 && only(seen.scraped, "lost"),
    );
    const why = [
      "broker redis is lost: the server refused the login: NOAUTH Authentication required.",
    ];
    expect(lost.ready.body.why).toEqual(why);
    expect(lost.live.body).toEqual({ live: false, state: "ready", why });
    expect(lost.scraped.connected).toBe(0);

    expect(
      await own.cli("-a", "rotated", "--no-auth-warning", "CONFIG", "SET", "requirepass", ""),
    ).toBe("OK");
    const back = await poll(
      http,
      "redis",
      "redis connected again",
      30_000,
      (seen) =>
        seen.ready.status === 200 && seen.live.status === 200 && only(seen.scraped, "connected"),
    );
    process.stderr.write(`[outage redis, refused login] ${JSON.stringify({ lost, back })}\n`);
    await running.publish(stream, { after: "login" });
    const deadline = Date.now() + 30_000;
    while (handled.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(handled).toEqual([{ after: "login" }]);
  } finally {
    await running.stop();
    await http.close();
  }
});

test("redis: a blocking reader's connection cut alone counts: reconnecting until it is back", async () => {
  const own = await ownServer();
  const { app } = streamApp(own);
  const changes: string[] = [];
  app.observe((event: RuntimeEvent) => {
    if (event.type === "broker-connection") {
      changes.push(`${event.state}${event.reason === undefined ? "" : `: ${event.reason}`}`);
    }
  });
  const running = await app.start();
  try {
    const reader = (await own.cli("CLIENT", "LIST"))
      .split("\n")
      .find((line) => line.includes(" name=ruststream-reader "));
    const id = reader === undefined ? undefined : /\bid=(\d+)/.exec(reader)?.[1];
    expect(id, "the subscriber's blocking reader is connected").toBeDefined();
    expect(await own.cli("CLIENT", "KILL", "ID", String(id))).toBe("1");
    const deadline = Date.now() + 30_000;
    while (changes.length < 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(changes).toEqual([
      "connected",
      `reconnecting: the connection to Redis at ${own.url.slice("redis://".length)} closed`,
      "connected",
    ]);
  } finally {
    await running.stop();
  }
  expect(changes.at(-1)).toBe("closed");
});
