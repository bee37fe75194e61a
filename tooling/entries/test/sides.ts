// A side of the round trips: a child process (plain node, no loader) that loads every entry one
// way, answering the steps this file sends it over the IPC channel (fixtures/side.mjs).
import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";

export type SideKind = "require" | "import";

interface Answer {
  readonly step: string;
  readonly ok: boolean;
  readonly report?: unknown;
  readonly error?: string;
}

const scripts: Record<SideKind, string> = {
  require: join(import.meta.dirname, "fixtures", "requireSide.cjs"),
  import: join(import.meta.dirname, "fixtures", "importSide.mjs"),
};

export class Side {
  readonly kind: SideKind;
  readonly #child: ChildProcess;
  readonly #waiting = new Map<string, (answer: Answer) => void>();
  #stderr = "";
  #exit: string | undefined;

  private constructor(kind: SideKind, child: ChildProcess) {
    this.kind = kind;
    this.#child = child;
    child.stderr?.on("data", (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString()).slice(-4000);
    });
    child.on("message", (message: Answer) => this.#waiting.get(message.step)?.(message));
    child.on("exit", (code, signal) => {
      this.#exit = `exited with ${signal ?? code}`;
      for (const [step, answer] of this.#waiting) answer({ step, ok: false, error: this.#exit });
    });
  }

  /** Starts the side with `specifiers` to load; resolves once it loaded them all. */
  static async start(kind: SideKind, specifiers: readonly string[]): Promise<Side> {
    const child = fork(scripts[kind], [], {
      env: { ...process.env, RS_ENTRIES: JSON.stringify(specifiers) },
      stdio: ["ignore", "inherit", "pipe", "ipc"],
      // Plain node: no loader, no source condition, so each specifier resolves to the build.
      execArgv: [],
    });
    const side = new Side(kind, child);
    await side.#answer("ready");
    return side;
  }

  #answer(step: string): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.#exit !== undefined) {
        reject(this.#failure(step, this.#exit));
        return;
      }
      this.#waiting.set(step, (answer) => {
        this.#waiting.delete(step);
        if (answer.ok) resolve(answer.report);
        else reject(this.#failure(step, answer.error ?? "failed"));
      });
    });
  }

  #failure(step: string, error: string): Error {
    return new Error(
      `the ${this.kind} side, step ${step}: ${error}\n--- its stderr ---\n${this.#stderr}`,
    );
  }

  /** Runs one step (load, publish, consume) and resolves to its report. */
  ask<T>(step: string, plan: unknown): Promise<T> {
    const answer = this.#answer(step);
    this.#child.send({ step, plan });
    return answer as Promise<T>;
  }

  stop(): void {
    if (this.#exit === undefined) this.#child.kill();
  }
}
