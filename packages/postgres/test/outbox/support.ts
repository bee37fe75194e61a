import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer } from "node:net";
import { promisify } from "node:util";
import {
  type BackgroundFailureEvent,
  type BackgroundRecoveredEvent,
  type BatchSubscription,
  type Delivery,
  type LogEntry,
  type Logger,
  lineLogger,
  type PublishEvent,
  type RunningApp,
  RustStream,
} from "@ruststream/core";
import { RedisBroker } from "@ruststream/redis";
import { bytes } from "@ruststream/tooling-testkit";
import pg from "pg";
import type { PostgresOutbox } from "../../src/index.js";
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

/** A Redis server of the test's own (the shared one is never stopped or reconfigured). */
export interface OwnRedis {
  readonly url: string;
  /** Lets a server started `refusing` take writes. */
  accept(): Promise<void>;
  /** Kills the server with SIGKILL (it keeps nothing: no snapshot, no append-only file). */
  kill(): Promise<void>;
  /** Starts it again on its port, empty. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a `redis-server` on a port of its own. `refusing`: it refuses every write
 * (`min-replicas-to-write 1` with no replica: each XADD answers NOREPLICAS), the state of a broker
 * that does not take messages, until `accept()`.
 */
export async function ownRedis(options: { readonly refusing: boolean }): Promise<OwnRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const start = async (refusing: boolean) => {
    const args = [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
    ];
    if (refusing) args.push("--min-replicas-to-write", "1");
    const started = spawn("redis-server", args, { stdio: "ignore" });
    child = started;
    exited = new Promise<void>((resolve) => started.once("exit", () => resolve()));
    await waitUntil(10_000, "the test's own redis-server answering", () =>
      redisCli(url, "PING").then(
        (answer) => answer === "PONG",
        () => false,
      ),
    );
  };
  const kill = async () => {
    child?.kill("SIGKILL");
    await exited;
  };
  await start(options.refusing);
  return {
    url,
    accept: async () => {
      await redisCli(url, "CONFIG", "SET", "min-replicas-to-write", "0");
    },
    kill,
    restart: () => start(false),
    stop: kill,
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

/**
 * Runs `work` in a transaction on a connection of its own to `url`; commits, or rolls back when
 * `rollback`.
 */
export async function inTransaction(
  url: string,
  work: (tx: pg.ClientBase) => Promise<void>,
  rollback = false,
): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("BEGIN");
    await work(client);
    await client.query(rollback ? "ROLLBACK" : "COMMIT");
  } finally {
    await client.end();
  }
}

/**
 * Writes one message for `target` to the outbox in a transaction of its own and waits until the
 * relay put it on the (empty) Redis stream: the proof a relay works again after an outage.
 */
export async function relaysOne(
  url: string,
  outbox: PostgresOutbox,
  target: { readonly redisUrl: string; readonly label: string; readonly name: string },
  text: string,
): Promise<void> {
  await inTransaction(url, async (tx) => {
    await outbox.publish(tx, { broker: target.label, name: target.name }, { payload: bytes(text) });
  });
  await waitUntil(20_000, `"${text}" relayed`, async () => {
    return Number(await redisCli(target.redisUrl, "XLEN", target.name)) === 1;
  });
}

/** A logger that keeps the relay's warnings (and worse, or from `level` on) as entries. */
export function warnings(level: "info" | "warn" = "warn"): {
  readonly logger: Logger;
  readonly entries: LogEntry[];
} {
  const entries: LogEntry[] = [];
  const logger = lineLogger(
    (entry) => {
      entries.push(entry);
      return "";
    },
    { level, write: () => {} },
  );
  return { logger, entries };
}

/** An app on the shared Redis whose outbox relay runs in it, and what its observers saw. */
export interface RelayApp {
  readonly running: RunningApp;
  /** Its background-failure events, in order. */
  readonly failures: BackgroundFailureEvent[];
  /** Its background-failure and background-recovered events, in order. */
  readonly background: (BackgroundFailureEvent | BackgroundRecoveredEvent)[];
  /** Its publishes to `name`, in order. */
  readonly published: PublishEvent[];
}

/** Starts an app relaying the outbox's rows of `label` to the shared Redis, with `logger`. */
export async function startRelayApp(
  outbox: PostgresOutbox,
  options: {
    readonly redisUrl: string;
    readonly label: string;
    readonly name: string;
    readonly logger: Logger;
  },
): Promise<RelayApp> {
  const redis = new RedisBroker({ url: options.redisUrl });
  const app = new RustStream({ name: "outbox-relay", version: "1.0.0" })
    .broker(redis)
    .afterStartup(async (running) => {
      await outbox.relayIn(running, {
        brokers: { [options.label]: redis },
        pollMs: 50,
        logger: options.logger,
      });
    });
  const failures: BackgroundFailureEvent[] = [];
  const background: (BackgroundFailureEvent | BackgroundRecoveredEvent)[] = [];
  const published: PublishEvent[] = [];
  app.observe((event) => {
    if (event.type === "background-failure") failures.push(event);
    if (event.type === "background-failure" || event.type === "background-recovered") {
      background.push(event);
    }
    if (event.type === "publish" && event.name === options.name) published.push(event);
  });
  return { running: await app.start(), failures, background, published };
}
