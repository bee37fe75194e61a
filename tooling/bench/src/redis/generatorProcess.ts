import { type ChildProcess, fork } from "node:child_process";
import type { GeneratorCommand, GeneratorReply } from "./protocol.js";
import type { Target } from "./target.js";

/** The bench's handle on its load generator process: one command at a time, plus credit. */
export class GeneratorProcess {
  readonly #child: ChildProcess;
  #waiting: ((reply: GeneratorReply) => void) | undefined;

  private constructor(child: ChildProcess) {
    this.#child = child;
    child.on("message", (reply: GeneratorReply) => {
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting?.(reply);
    });
    child.on("exit", (code) => {
      this.#waiting?.({ kind: "failed", message: `the generator exited (${code})` });
      this.#waiting = undefined;
    });
  }

  /**
   * Forks generator.ts with the same loader flags (tsx) this process runs under, telling it the
   * target in its environment (a cluster's password stays out of the process list).
   */
  static async start(target: Target): Promise<GeneratorProcess> {
    const child = fork(new URL("./generator.ts", import.meta.url), [], {
      execArgv: process.execArgv,
      env: { ...process.env, BENCH_REDIS_TARGET: JSON.stringify(target) },
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const generator = new GeneratorProcess(child);
    await generator.#next();
    return generator;
  }

  #next(): Promise<GeneratorReply> {
    return new Promise((resolve, reject) => {
      this.#waiting = (reply) => {
        if (reply.kind === "failed") reject(new Error(`load generator: ${reply.message}`));
        else resolve(reply);
      };
    });
  }

  /** Sends a fill or publish; resolves when the generator has finished it. */
  run(command: Exclude<GeneratorCommand, { kind: "credit" | "exit" }>): Promise<GeneratorReply> {
    const answer = this.#next();
    this.#child.send(command);
    return answer;
  }

  credit(received: number): void {
    this.#child.send({ kind: "credit", received } satisfies GeneratorCommand);
  }

  stop(): void {
    if (this.#child.connected) this.#child.send({ kind: "exit" } satisfies GeneratorCommand);
  }
}
