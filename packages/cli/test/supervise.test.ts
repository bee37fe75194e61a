import { spawn } from "node:child_process";
import { join } from "node:path";
import { childEnv } from "@ruststream/tooling-testkit";
import { expect, onTestFinished, test } from "vitest";
import { cliCommand, fixtures, packageRoot, startCli } from "./cli.js";

test("Ctrl-C at a terminal reaches every process of --workers: each drains once, all exit 0", async () => {
  // A process group of its own, as a terminal gives its foreground job: SIGINT goes to the
  // supervisor and to both workers at once, and the supervisor forwards SIGTERM on top.
  const [command, ...rest] = cliCommand;
  const proc = spawn(command!, [...rest, "run", join(fixtures, "memoryApp.ts"), "--workers", "2"], {
    cwd: packageRoot,
    env: childEnv(),
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  proc.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  let done = false;
  const exited = new Promise<number | null>((resolve) =>
    proc.on("close", (code) => {
      done = true;
      resolve(code);
    }),
  );
  onTestFinished(() => {
    if (!done) process.kill(-proc.pid!, "SIGKILL");
  });
  const deadline = Date.now() + 20_000;
  while ((err.match(/INFO {2}ready worker=\d/g)?.length ?? 0) < 2) {
    if (Date.now() > deadline) throw new Error(`the workers did not start:\n${err}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.kill(-proc.pid!, "SIGINT");
  expect(await exited, err).toBe(0);
  expect(err.match(/INFO {2}stopped worker=\d failed=false aborted=false/g)).toHaveLength(2);
  expect(err).not.toContain("second signal");
  expect(err).toMatch(/INFO {2}all workers stopped supervisor=workers workers=2 clean=true/);
});

test("a second signal at a supervisor kills a service still draining and exits 1", async () => {
  const cli = startCli(["run", join(fixtures, "slowDrain.ts"), "--workers", "1"]);
  await cli.waitFor(/INFO {2}long job started/);
  cli.signal("SIGTERM");
  await cli.waitFor(/INFO {2}stopping worker=1 reason="signal SIGTERM"/);
  const asked = Date.now();
  cli.signal("SIGTERM");
  const exit = await cli.exited;
  expect(exit.code).toBe(1);
  // Well before the service's 20 s drain would have ended.
  expect(Date.now() - asked).toBeLessThan(5_000);
  expect(cli.stderr()).toMatch(
    /WARN {2}second signal: killing the service without waiting for the drain supervisor=workers/,
  );
  expect(cli.stderr()).toMatch(
    /worker stopped supervisor=workers worker=1 pid=\d+ exit="killed by SIGKILL"/,
  );
});

test("a second signal at a lone service exits 1 at once", async () => {
  const cli = startCli(["run", join(fixtures, "slowDrain.ts")]);
  await cli.waitFor(/INFO {2}long job started/);
  cli.signal("SIGINT");
  await cli.waitFor(/INFO {2}stopping reason="signal SIGINT"/);
  cli.signal("SIGINT");
  expect((await cli.exited).code).toBe(1);
  expect(cli.stderr()).toMatch(/WARN {2}second signal: exiting without waiting for the drain/);
});

// The supervisor is killed as soon as both workers logged "ready", which each does just before it
// reports ready over IPC: that report can meet the dead channel, and it once crashed the worker
// (EPIPE, unhandled) before it drained, one run in several on a loaded machine.
test("workers whose supervisor is killed stop by themselves: no orphan keeps consuming", async () => {
  const cli = startCli(["run", join(fixtures, "memoryApp.ts"), "--workers", "2"]);
  await cli.waitForCount(/INFO {2}ready worker=\d/, 2);
  const pids = [
    ...cli.stderr().matchAll(/worker started supervisor=workers worker=\d pid=(\d+)/g),
  ].map((m) => Number(m[1]));
  expect(pids).toHaveLength(2);
  cli.signal("SIGKILL");
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + 10_000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(pids.filter(alive), cli.stderr()).toEqual([]);
  // They drained as on a signal: their stderr is the supervisor's pipe, which closes only once
  // the last of them has exited.
  await cli.exited;
  const log = cli.stderr();
  // The whole log on a mismatch: which worker said what is the only clue to a wrong count.
  expect(log.match(/INFO {2}stopping worker=\d reason="supervisor gone"/g), log).toHaveLength(2);
  expect(log.match(/INFO {2}stopped worker=\d failed=false aborted=false/g), log).toHaveLength(2);
});
