import { type ChildProcess, spawn } from "node:child_process";
import { runtimeName } from "@ruststream/core/broker";
import { sleep } from "@ruststream/testing";
import { childEnv, scriptCommand } from "./scriptCommand.js";

// A consumer whose memory a test measures runs in a process of its own: the test runner's heap
// (vitest, the test's own buffers, other test files) would blur a few megabytes either way. The
// child runs with --expose-gc and answers over the IPC channel; both sides live here.

/** What the child's memory holds once a full collection ran, and how far its handler got. */
export interface HeapSample {
  /** V8's live heap. */
  readonly heapUsed: number;
  /** Bytes in ArrayBuffers (Node Buffers among them): what a read reply's payloads sit in. */
  readonly arrayBuffers: number;
  /** The resident set: what a native client's buffers (librdkafka's queue) show in, beside the heap. */
  readonly rss: number;
  /** Messages the handler was entered for. */
  readonly handled: number;
}

/** The JavaScript memory a sample counts: the heap and the Buffers outside it together. */
export function heldBytes(sample: HeapSample): number {
  return sample.heapUsed + sample.arrayBuffers;
}

type Request =
  | { readonly type: "sample" }
  | { readonly type: "release" }
  | { readonly type: "stop" };
type Answer = { readonly type: "ready" } | ({ readonly type: "sample" } & HeapSample);

/** The child's side: what the probe asks of the consumer it runs. */
export interface ProbedConsumer {
  handled(): number;
  /** Lets the held handler return, and every later call run through. */
  release(): void;
  stop(): Promise<void>;
}

/** The child's side: answers the test's requests; call once the app is started. */
export function serveHeapProbe(consumer: ProbedConsumer): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  const send = process.send?.bind(process);
  if (gc === undefined || send === undefined) {
    throw new Error("a heap probe runs with --expose-gc and an IPC channel (startHeapProbe)");
  }
  // The test went away (failed, killed): nothing is left to answer, and the app must not linger.
  process.on("disconnect", () => process.exit(1));
  process.on("message", (request: Request) => {
    if (request.type === "release") {
      consumer.release();
    } else if (request.type === "stop") {
      void consumer.stop().then(() => process.exit(0));
    } else {
      // Twice, a turn apart: what the first collection's finalizers let go is collected by the
      // second, so the sample is what is reachable, not what happens not to be collected yet.
      gc();
      setImmediate(() => {
        gc();
        const memory = process.memoryUsage();
        const answer: Answer = {
          type: "sample",
          heapUsed: memory.heapUsed,
          // Deno answers 0 for `arrayBuffers` and counts them under `external`, beside what
          // little else it has there; Node counts them in both. Bun answers 0 for both and counts
          // them in `heapUsed` (JSC's heap size, its extra memory included), so the sum holds there.
          arrayBuffers: runtimeName() === "deno" ? memory.external : memory.arrayBuffers,
          rss: memory.rss,
          handled: consumer.handled(),
        };
        send(answer);
      });
    }
  });
  send({ type: "ready" } satisfies Answer);
}

/** The test's side of a running probe. */
export interface HeapProbe {
  sample(): Promise<HeapSample>;
  release(): void;
  /** Stops the app (its subscription closes, giving back what it read ahead) and the process. */
  stop(): Promise<void>;
}

export interface HeapProbeOptions {
  /** The consumer: a TypeScript file calling serveHeapProbe, run on the sources (scriptCommand). */
  readonly fixture: string;
  readonly args: readonly string[];
  /** The package whose tests start it: the fixture's imports resolve from there. */
  readonly cwd: string;
}

/** Starts the fixture with --expose-gc; resolves once its app started and the probe answers. */
export function startHeapProbe(options: HeapProbeOptions): Promise<HeapProbe> {
  const [command, ...args] = scriptCommand(options.fixture, { v8Flags: ["--expose-gc"] });
  const child: ChildProcess = spawn(command!, [...args, ...options.args], {
    cwd: options.cwd,
    env: childEnv(),
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const waiting: ((sample: HeapSample) => void)[] = [];
  const ready = new Promise<void>((resolve) => {
    child.on("message", (answer: Answer) => {
      if (answer.type === "ready") resolve();
      else waiting.shift()?.({ ...answer });
    });
  });
  const died = exited.then((code) => {
    throw new Error(`${options.fixture} exited with ${code} while the test still needed it`);
  });
  died.catch(() => undefined);
  const probe: HeapProbe = {
    sample: () => {
      const answered = new Promise<HeapSample>((resolve) => waiting.push(resolve));
      child.send({ type: "sample" } satisfies Request);
      return Promise.race([answered, died]);
    },
    release: () => child.send({ type: "release" } satisfies Request),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ type: "stop" } satisfies Request);
      const stopped = await Promise.race([
        exited,
        new Promise<"late">((resolve) => setTimeout(() => resolve("late"), 15_000).unref()),
      ]);
      if (stopped === "late") child.kill("SIGKILL");
    },
  };
  return Promise.race([ready.then(() => probe), died]);
}

/**
 * The child's handler, held on its first message until the test releases it, and the probe served
 * for the app once started: what every backlog fixture's consumer does around its own broker.
 */
export interface HeldHandler {
  /** The subscriber's handler: counts each message, and waits while held. */
  readonly handle: () => Promise<void>;
  /** Serves the probe for `running` (the started app); call once. */
  serve(running: { stop(): Promise<unknown> }): void;
}

export function heldHandler(): HeldHandler {
  let handled = 0;
  let release: () => void = () => {};
  let held: Promise<void> | undefined = new Promise((resolve) => {
    release = resolve;
  });
  return {
    handle: async () => {
      handled++;
      if (held !== undefined) await held;
    },
    serve: (running) =>
      serveHeapProbe({
        handled: () => handled,
        release: () => {
          held = undefined;
          release();
        },
        stop: async () => {
          await running.stop();
        },
      }),
  };
}

/**
 * Waits until the held consumer stopped reading ahead: its resident set moved less than `within`
 * bytes across `intervalMs`, twice in a row. A native client (librdkafka) fills its queue in the
 * background after the first record is handed over, at a pace set by the machine's load; sampling
 * at a fixed delay compared a queue still filling with a full one. Fails past `timeoutMs`: a read-ahead
 * that never stops is what a backlog test is there to catch.
 */
export async function readAheadSettled(
  probe: HeapProbe,
  { within = 1024 * 1024, intervalMs = 500, timeoutMs = 20_000 } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = (await probe.sample()).rss;
  let steady = 0;
  while (steady < 2) {
    if (Date.now() > deadline) {
      throw new Error(
        `the held consumer's resident set still moved after ${timeoutMs} ms (last ${last} bytes): its read-ahead never stopped`,
      );
    }
    await sleep(intervalMs);
    const rss = (await probe.sample()).rss;
    steady = Math.abs(rss - last) < within ? steady + 1 : 0;
    last = rss;
  }
}

/**
 * The largest of three samples, each after a forced collection, so one lucky collection does not
 * flatter the consumer.
 */
export async function settledSample(probe: HeapProbe): Promise<HeapSample> {
  let largest = await probe.sample();
  for (let i = 0; i < 2; i++) {
    const next = await probe.sample();
    if (heldBytes(next) > heldBytes(largest)) largest = next;
  }
  return largest;
}

/** What a drain sampled: its peaks from the held sample on, and how long it took. */
export interface DrainPeaks {
  readonly handled: number;
  /** The largest {@link heldBytes} seen, the held sample's included. */
  readonly peakHeld: number;
  readonly peakRss: number;
  readonly ms: number;
}

/**
 * Releases the held handler and samples every 250 ms (each after a forced collection) until
 * `count` messages are handled; fails past 60 s.
 */
export async function drainSampled(
  probe: HeapProbe,
  held: HeapSample,
  count: number,
): Promise<DrainPeaks> {
  const began = Date.now();
  probe.release();
  let peakHeld = heldBytes(held);
  let peakRss = held.rss;
  let handled = 0;
  while (handled < count) {
    await sleep(250);
    const sample = await probe.sample();
    handled = sample.handled;
    peakHeld = Math.max(peakHeld, heldBytes(sample));
    peakRss = Math.max(peakRss, sample.rss);
    if (Date.now() - began > 60_000) throw new Error(`drained only ${handled} in 60 s`);
  }
  return { handled, peakHeld, peakRss, ms: Date.now() - began };
}
