import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { childEnv, scriptCommand } from "./scriptCommand.js";

/** A service fixture running as its own process, on the test's runtime. */
export interface ChildService {
  readonly child: ChildProcess;
  /** Its exit code once it exited (`null`: killed by a signal). */
  readonly exited: Promise<number | null>;
}

export interface ChildServiceOptions {
  /** The fixture: a TypeScript file, run with the workspace packages' sources (scriptCommand). */
  readonly fixture: string;
  readonly args: readonly string[];
  /** The package whose tests start it: the fixture's imports resolve from there. */
  readonly cwd: string;
  /** Each line it prints on stdout but `ready`, before and after it printed that. */
  readonly onLine: (line: string) => void;
}

const running = new Set<ChildProcess>();

/**
 * Starts a service as a deployment would, in its own process, and resolves once it printed
 * `ready`; rejects if it exits before. Its stderr goes to the test's, so a crash shows why.
 */
export function startService(options: ChildServiceOptions): Promise<ChildService> {
  const [command, ...args] = scriptCommand(options.fixture);
  const child = spawn(command!, [...args, ...options.args], {
    cwd: options.cwd,
    env: childEnv(),
    stdio: ["ignore", "pipe", "inherit"],
  });
  running.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      if (line === "ready") resolve({ child, exited });
      else if (line !== "") options.onLine(line);
    });
    void exited.then((code) =>
      reject(new Error(`${options.fixture} exited with ${code} before it was ready`)),
    );
  });
}

/** SIGKILLs every service this test file started that is still running: for its `afterAll`. */
export function killServices(): void {
  for (const child of running) child.kill("SIGKILL");
}
