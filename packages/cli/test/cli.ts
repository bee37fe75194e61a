import { type ChildProcess, spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { childEnv, scriptCommand } from "@ruststream/tooling-testkit";
import { onTestFinished } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
export const packageRoot = join(here, "..");
export const fixtures = join(here, "fixtures");
export const repoRoot = join(packageRoot, "..", "..");
const bin = join(packageRoot, "src", "bin.ts");

/**
 * The command line that runs the source binary with the workspace's packages as source, on this
 * test's runtime (tooling/testkit's scriptCommand: on Node through tsx, on Bun and Deno with their
 * own TypeScript).
 */
export const cliCommand: readonly string[] = scriptCommand(bin);

/** A `ruststream` process the test started, with its output kept. */
export interface CliProcess {
  readonly proc: ChildProcess;
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stderr (or stdout) from `from` on. */
  waitFor(
    pattern: RegExp,
    options?: { timeoutMs?: number; stream?: "stdout" | "stderr" },
  ): Promise<RegExpMatchArray>;
  /** Resolves once `pattern` has matched `count` times in stderr. */
  waitForCount(pattern: RegExp, count: number, timeoutMs?: number): Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  signal(signal: NodeJS.Signals): void;
}

export function startCli(
  args: readonly string[],
  options: { cwd?: string; env?: Readonly<Record<string, string>> } = {},
): CliProcess {
  const [command, ...rest] = cliCommand;
  const proc = spawn(command!, [...rest, ...args], {
    cwd: options.cwd ?? packageRoot,
    env: childEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  const listeners = new Set<() => void>();
  const changed = (): void => {
    for (const listener of listeners) listener();
  };
  proc.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    changed();
  });
  proc.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
    changed();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on("close", (code, signal) => {
      changed();
      resolve({ code, signal });
    });
  });
  let done = false;
  void exited.then(() => {
    done = true;
  });
  // A test that failed half-way leaves no process behind; a supervisor's children stop by
  // themselves once its IPC channel closes.
  onTestFinished(() => {
    if (!done) proc.kill("SIGKILL");
  });
  const until = <T>(check: () => T | undefined, what: string, timeoutMs: number): Promise<T> =>
    new Promise((resolve, reject) => {
      const test = (): boolean => {
        const found = check();
        if (found === undefined) {
          if (done) {
            finish();
            reject(
              new Error(`the process exited before ${what}\nstdout:\n${out}\nstderr:\n${err}`),
            );
            return true;
          }
          return false;
        }
        finish();
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${what}\nstdout:\n${out}\nstderr:\n${err}`,
          ),
        );
      }, timeoutMs);
      const listener = (): void => {
        test();
      };
      const finish = (): void => {
        clearTimeout(timer);
        listeners.delete(listener);
      };
      listeners.add(listener);
      test();
    });
  return {
    proc,
    pid: proc.pid!,
    stdout: () => out,
    stderr: () => err,
    waitFor: (pattern, { timeoutMs = 20_000, stream = "stderr" } = {}) =>
      until(
        () => (stream === "stderr" ? err : out).match(pattern) ?? undefined,
        `${pattern} on ${stream}`,
        timeoutMs,
      ),
    waitForCount: (pattern, count, timeoutMs = 20_000) => {
      const global = new RegExp(
        pattern.source,
        pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`,
      );
      return until(
        () => ((err.match(global)?.length ?? 0) >= count ? true : undefined),
        `${count} x ${pattern}`,
        timeoutMs,
      ).then(() => {});
    },
    exited,
    // Not `proc.kill`: on Deno it reports the process as ended by the signal even when it drained
    // and exited 0.
    signal: (signal) => {
      process.kill(proc.pid!, signal);
    },
  };
}

/** Runs the CLI to its end and returns what it printed and its exit code. */
export async function runCli(
  args: readonly string[],
  options: { cwd?: string; env?: Readonly<Record<string, string>> } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cli = startCli(args, options);
  const { code } = await cli.exited;
  return { code, stdout: cli.stdout(), stderr: cli.stderr() };
}
