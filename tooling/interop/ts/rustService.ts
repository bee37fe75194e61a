import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { beforeAll, describe } from "vitest";

// A RustStream service in Rust (tooling/interop's `serve`), started and driven by a test: the
// process takes one JSON command per line on stdin and answers on stdout, one reply per command
// and one event per delivery its handler saw (tooling/interop/README.md has the protocol). The
// interop tests of every broker package import it as `@ruststream/tooling-interop`.

const CRATE_DIR = fileURLToPath(new URL("../", import.meta.url));
// Outside the clone and shared with the file package's interop tests, so nothing compiles twice.
const TARGET_DIR = resolve(
  CRATE_DIR,
  process.env.CARGO_TARGET_DIR ?? join(homedir(), ".cache/ruststream/interop-target"),
);
const BINARY = join(TARGET_DIR, "release", "ruststream-interop");

/**
 * The minutes a cold build of tooling/interop may take on two cores: with librdkafka and the Pulsar
 * crate it took 55 min on a loaded machine (tooling/interop/README.md has the figures).
 */
export const BUILD_TIMEOUT_MS = 60 * 60_000;

let built = false;

/**
 * `RUSTSTREAM_SKIP_INTEROP=1`: the explicit opt-out for a machine without Rust, the same one the file
 * package's codec interop tests take. The suites then show in the tally as skipped, under a title
 * that says why; without it, a missing cargo fails them with the fix.
 */
export const interopSkipped = process.env.RUSTSTREAM_SKIP_INTEROP === "1";

/** A suite of tests with RustStream services: the program built first, skipped only on the opt-out. */
export function interopSuite(
  title: string,
  body: () => void,
  options: { timeout?: number } = {},
): void {
  describe.skipIf(interopSkipped)(
    `${title}${interopSkipped ? " (skipped: RUSTSTREAM_SKIP_INTEROP=1)" : ""}`,
    options,
    () => {
      beforeAll(() => buildRustInterop(), BUILD_TIMEOUT_MS);
      body();
    },
  );
}

/**
 * Builds tooling/interop (a no-op when the cached build is current). Without cargo it fails with
 * the fix: the interop tests never pass by skipping what they prove.
 */
export function buildRustInterop(): void {
  if (built) return;
  if (spawnSync("cargo", ["--version"]).status !== 0) {
    throw new Error(
      "cargo is not installed: the interop tests run RustStream services built from tooling/interop; install Rust (https://rustup.rs) and run the tests again",
    );
  }
  execFileSync("cargo", ["build", "--release", "--locked", "--quiet"], {
    cwd: CRATE_DIR,
    env: { ...process.env, CARGO_TARGET_DIR: TARGET_DIR },
    stdio: ["ignore", "inherit", "inherit"],
  });
  built = true;
}

export type RustTransport =
  | "stream"
  | "list"
  | "pubsub"
  | "file"
  | "kafka"
  | "pulsar"
  | "nats"
  | "rabbitmq"
  | "postgres";

/** The subscriber a Rust service mounts (tooling/interop/README.md). */
export interface RustConsume {
  readonly key: string;
  readonly group?: string;
  readonly consumer?: string;
  readonly block_ms?: number;
  readonly reclaim_ms?: number;
  readonly delayed_key?: string;
  readonly codec?: "bytes" | "json";
  readonly max_attempts?: number;
  readonly dead_letter?: string;
  readonly replay?: boolean;
  readonly start_at?: number;
  /** The handler holds every delivery from the first on (as after `hold()`). */
  readonly hold?: boolean;
  /**
   * Files: RustStream's OpenTelemetry integration (its `otel` feature) on the subscriber, which
   * replies to this key with `{"echo": <payload>}`: a span per delivery, whose context the delivery's
   * reported headers and the reply carry as `traceparent` (a new trace when the delivery has none).
   */
  readonly otel_reply?: string;
  /** NATS: the JetStream stream the subject is read from (a durable pull consumer named `group`). */
  readonly stream?: string;
  /** NATS: the core subject read in the queue group `group`, shared with its other members. */
  readonly queue?: boolean;
  /** RabbitMQ: a quorum queue, which counts deliveries (declared by the crate). */
  readonly quorum?: boolean;
  /**
   * RabbitMQ, a classic queue: a `retry_after` goes through the crate's TTL waiting queue
   * `<key>.retry` (`Delay::dlx_ttl()`, declared by the crate) instead of the runtime's copy held in
   * the process.
   */
  readonly delay?: boolean;
  /** RabbitMQ: the broker's prefetch, the deliveries the consumer holds unacked at most. */
  readonly prefetch?: number;
  /** NATS and RabbitMQ: answer each request (a delivery naming its `reply-to`) with `rust:<payload>`. */
  readonly reply?: boolean;
}

export interface RustConfig {
  readonly transport: RustTransport;
  readonly url?: string;
  readonly path?: string;
  readonly consume?: RustConsume;
}

/** A message for the Rust service to publish. */
export interface RustOutgoing {
  readonly key: string;
  readonly payload: Uint8Array;
  readonly headers?: readonly (readonly [string, Uint8Array | string])[];
  readonly partitionKey?: Uint8Array | string;
}

/** One delivery as the Rust handler saw it. */
export interface RustDelivery {
  /**
   * The subscription: `stream`, `reclaim`, `list`, `pubsub`, `file`, `kafka`, `pulsar`, `nats`,
   * `jetstream`, `rabbitmq` or `postgres`.
   */
  readonly via: string;
  readonly payload: Buffer;
  /** Every header, in the order the crate's map holds them. */
  readonly headers: readonly (readonly [string, Buffer])[];
  /** What the crate's message reports as its partition key. */
  readonly partitionKey: Buffer | null;
  readonly retryCount: number;
  /** The attempt the RustStream runtime counts for this delivery. */
  readonly attempt: number;
  readonly contentType: string | null;
  readonly outcome: "ack" | "retry" | "retry_after" | "hold";
}

interface Reply {
  readonly reply: string | null;
  readonly error?: string;
  readonly [field: string]: unknown;
}

const b64 = (value: Uint8Array | string): string =>
  (typeof value === "string" ? Buffer.from(value) : Buffer.from(value)).toString("base64");
const unb64 = (text: string): Buffer => Buffer.from(text, "base64");

interface DeliveryLine {
  readonly via: string;
  readonly payload: string;
  readonly headers: [string, string][];
  readonly partition_key: string | null;
  readonly retry_count: number;
  readonly attempt: number;
  readonly content_type: string | null;
  readonly outcome: RustDelivery["outcome"];
}

function delivery(line: DeliveryLine): RustDelivery {
  return {
    via: line.via,
    payload: unb64(line.payload),
    headers: line.headers.map(([name, value]) => [name, unb64(value)] as const),
    partitionKey: line.partition_key === null ? null : unb64(line.partition_key),
    retryCount: line.retry_count,
    attempt: line.attempt,
    contentType: line.content_type,
    outcome: line.outcome,
  };
}

/** A message as the protocol carries it. */
function outgoingLine(m: RustOutgoing): Record<string, unknown> {
  return {
    key: m.key,
    payload: b64(m.payload),
    headers: (m.headers ?? []).map(([name, value]) => [name, b64(value)]),
    partition_key: m.partitionKey === undefined ? null : b64(m.partitionKey),
  };
}

const running = new Set<RustService>();

/** Kills every service a test left running (call it in `afterEach`/`afterAll`). */
export async function killRustServices(): Promise<void> {
  await Promise.all([...running].map((s) => s.kill()));
}

export class RustService {
  /** Every delivery the handler saw, in order, as the events arrived. */
  readonly deliveries: RustDelivery[] = [];
  /** Payloads the runtime settled by its decode policy (`codec: "json"`). */
  readonly decodeFailures: Buffer[] = [];
  readonly #child: ChildProcess;
  readonly #exited: Promise<number | null>;
  readonly #stderr: string[] = [];
  #waiters = new Set<() => void>();
  #replies: Reply[] = [];
  #exitCode: number | null | undefined;
  // One command at a time: a reply answers the command before it.
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(readonly config: RustConfig) {
    this.#child = spawn(BINARY, ["serve", JSON.stringify(config)], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    running.add(this);
    this.#exited = new Promise((resolveExit) =>
      this.#child.once("exit", (code) => {
        this.#exitCode = code;
        running.delete(this);
        this.#wake();
        resolveExit(code);
      }),
    );
    createInterface({ input: this.#child.stdout! }).on("line", (line) => this.#line(line));
    createInterface({ input: this.#child.stderr! }).on("line", (line) => {
      this.#stderr.push(line);
      if (this.#stderr.length > 50) this.#stderr.shift();
    });
  }

  /** Starts the service and resolves once its app runs (every subscription open). */
  static async start(config: RustConfig): Promise<RustService> {
    buildRustInterop();
    const service = new RustService(config);
    await service.#until("the Rust service to start", () => service.#ready, 30_000);
    return service;
  }

  #ready = false;

  #line(text: string): void {
    let line: Record<string, unknown>;
    try {
      line = JSON.parse(text) as Record<string, unknown>;
    } catch {
      this.#stderr.push(`stdout: ${text}`);
      return;
    }
    if (line.event === "ready") this.#ready = true;
    else if (line.event === "delivery")
      this.deliveries.push(delivery(line as unknown as DeliveryLine));
    else if (line.event === "decode_failure")
      this.decodeFailures.push(unb64(line.payload as string));
    else if ("reply" in line) this.#replies.push(line as unknown as Reply);
    this.#wake();
  }

  #wake(): void {
    for (const waiter of this.#waiters) waiter();
  }

  /** Resolves when `condition` holds, checked on every line the service writes. */
  #until(what: string, condition: () => boolean, timeoutMs: number): Promise<void> {
    return new Promise((resolveWait, reject) => {
      const check = () => {
        if (condition()) {
          done();
          resolveWait();
        } else if (this.#exitCode !== undefined) {
          done();
          reject(
            new Error(
              `the Rust service exited (${this.#exitCode}) while waiting for ${what}${this.#tail()}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`still waiting after ${timeoutMs} ms for ${what}${this.#tail()}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }

  #tail(): string {
    return this.#stderr.length === 0 ? "" : `; its stderr ends:\n${this.#stderr.join("\n")}`;
  }

  /** Waits until the handler's deliveries satisfy `condition` (the protocol's "consume until"). */
  waitFor(
    what: string,
    condition: (deliveries: readonly RustDelivery[]) => boolean,
    timeoutMs = 20_000,
  ): Promise<void> {
    return this.#until(what, () => condition(this.deliveries), timeoutMs);
  }

  /** Waits for `count` deliveries. */
  waitForDeliveries(count: number, timeoutMs?: number): Promise<void> {
    return this.waitFor(`${count} deliveries`, (d) => d.length >= count, timeoutMs);
  }

  #command(command: Record<string, unknown>): Promise<Reply> {
    const op = command.op as string;
    const sent = this.#queue.then(async () => {
      const seen = this.#replies.length;
      this.#child.stdin!.write(`${JSON.stringify(command)}\n`);
      await this.#until(`the reply to ${op}`, () => this.#replies.length > seen, 30_000);
      const reply = this.#replies[seen]!;
      if (reply.error !== undefined)
        throw new Error(`the Rust service refused ${op}: ${reply.error}`);
      return reply;
    });
    this.#queue = sent.catch(() => undefined);
    return sent;
  }

  /** Publishes through the service's publisher, in order; resolves once every one was sent. */
  async publish(...messages: RustOutgoing[]): Promise<void> {
    await this.#command({
      op: "publish",
      messages: messages.map(outgoingLine),
    });
  }

  /** Sends `message` as a request through the crate's request/reply; resolves with the reply. */
  async request(
    message: RustOutgoing,
    timeoutMs = 5000,
  ): Promise<{ payload: Buffer; headers: (readonly [string, Buffer])[] }> {
    const reply = await this.#command({
      op: "request",
      message: outgoingLine(message),
      timeout_ms: timeoutMs,
    });
    return {
      payload: unb64(reply.payload as string),
      headers: (reply.headers as [string, string][]).map(([n, v]) => [n, unb64(v)] as const),
    };
  }

  /** The handler fails on these payloads: `retry()`, or `retry_after(delayMs)`. */
  async failOn(
    payloads: readonly (Uint8Array | string)[],
    options: { delayMs?: number } = {},
  ): Promise<void> {
    await this.#command({
      op: "fail_on",
      payloads: payloads.map(b64),
      ...(options.delayMs === undefined ? {} : { delay_ms: options.delayMs }),
    });
  }

  /** From now on the handler reports each delivery and never returns: it stays unsettled. */
  async hold(): Promise<void> {
    await this.#command({ op: "hold" });
  }

  /** Every delivery the service saw, from the service itself. */
  async report(): Promise<RustDelivery[]> {
    const reply = await this.#command({ op: "report" });
    return (reply.seen as DeliveryLine[]).map(delivery);
  }

  /** Shuts the app down gracefully; resolves with the exit code. */
  async exit(): Promise<number | null> {
    if (this.#exitCode !== undefined) return this.#exitCode;
    await this.#queue;
    this.#child.stdin!.write(`${JSON.stringify({ op: "exit" })}\n`);
    return this.#exited;
  }

  /** SIGKILL: no shutdown, whatever the service held stays where it was. */
  async kill(): Promise<void> {
    if (this.#exitCode !== undefined) return;
    this.#child.kill("SIGKILL");
    await this.#exited;
  }
}
