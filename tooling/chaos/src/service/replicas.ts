// The service's replicas as separate Node processes: started, SIGKILLed, started again, stopped as a
// deployment stops them (SIGTERM, then SIGKILL if the drain hangs). Every line they print goes to
// one listener, with the index of the replica that printed it, in the order the runner receives it.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { ServiceConfig } from "./config.js";

const entry = fileURLToPath(new URL("./main.ts", import.meta.url));
const packageDir = fileURLToPath(new URL("../..", import.meta.url));

interface Replica {
  child: ChildProcess;
  exited: Promise<number | null>;
}

export class Replicas {
  readonly #config: ServiceConfig;
  readonly #onLine: (line: string, replica: number) => void;
  readonly #running: (Replica | undefined)[];

  readonly #logFile: string;

  /** `logFile`: where the replicas' stderr (their logs, a crash's trace) goes, appended. */
  constructor(
    count: number,
    config: ServiceConfig,
    logFile: string,
    onLine: (line: string, replica: number) => void,
  ) {
    this.#config = config;
    this.#logFile = logFile;
    this.#onLine = onLine;
    this.#running = Array.from({ length: count }, () => undefined);
  }

  get count(): number {
    return this.#running.length;
  }

  /** Whether replica `i` runs (false once it exited, on its own or killed). */
  isRunning(i: number): boolean {
    return this.#running[i] !== undefined;
  }

  /** Starts every replica and resolves once each printed `ready`. */
  async startAll(): Promise<void> {
    await Promise.all(this.#running.map((_, i) => this.start(i)));
  }

  /** Starts replica `i` (which must not be running) and resolves once it printed `ready`. */
  start(i: number): Promise<void> {
    if (this.#running[i] !== undefined) throw new Error(`replica ${i} is already running`);
    const log = openSync(this.#logFile, "a");
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=@ruststream/source", entry, JSON.stringify(this.#config)],
      // Its index, for what must be stable per replica across restarts (a Kafka transactional id).
      {
        cwd: packageDir,
        stdio: ["ignore", "pipe", log],
        env: { ...process.env, CHAOS_REPLICA: String(i) },
      },
    );
    closeSync(log);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const replica: Replica = { child, exited };
    this.#running[i] = replica;
    void exited.then(() => {
      if (this.#running[i] === replica) this.#running[i] = undefined;
    });
    return new Promise((resolve, reject) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        if (line === "ready") resolve();
        else if (line !== "") this.#onLine(line, i);
      });
      void exited.then((code) =>
        reject(new Error(`service replica ${i} exited with ${code} before it was ready`)),
      );
    });
  }

  /** SIGKILLs replica `i`, as a crash would, and resolves once it is gone. */
  async kill(i: number): Promise<void> {
    const replica = this.#running[i];
    if (replica === undefined) return;
    replica.child.kill("SIGKILL");
    await replica.exited;
  }

  /** SIGTERM to every replica; SIGKILL to any still draining after `graceMs`. */
  async stopAll(graceMs: number): Promise<Array<number | null>> {
    return Promise.all(
      this.#running.map(async (replica) => {
        if (replica === undefined) return null;
        replica.child.kill("SIGTERM");
        const timer = setTimeout(() => replica.child.kill("SIGKILL"), graceMs);
        const code = await replica.exited;
        clearTimeout(timer);
        return code;
      }),
    );
  }
}
