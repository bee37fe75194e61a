import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FileProducer } from "@ruststream/file/format";
import { afterAll, expect, test, vi } from "vitest";
import { fixtures, packageRoot, startCli } from "./cli.js";

// A copy of the fixture service in a temporary folder, edited while a second process (this test)
// appends numbered messages to its stream file. Its data (the stream file, the consumer's position,
// the log of handled numbers) lives in the watched folder too, and must not restart it.
const dir = mkdtempSync(join(tmpdir(), "cli-watch-"));
const service = join(dir, "service");
mkdirSync(join(service, "data"), { recursive: true });
const appFile = join(service, "app.ts");
copyFileSync(join(fixtures, "watchService", "app.ts"), appFile);
writeFileSync(join(service, "package.json"), '{ "type": "module", "private": true }\n');
// The service's dependencies, as an installed service has them (the watcher never enters it).
symlinkSync(join(packageRoot, "node_modules"), join(service, "node_modules"));
const streamFile = join(service, "data", "numbers.ss");
const handledLog = join(service, "data", "handled.log");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function handled(): Array<{ n: number; edition: number }> {
  if (!existsSync(handledLog)) return [];
  return readFileSync(handledLog, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [n, edition] = line.split(" ").map(Number);
      return { n: n!, edition: edition! };
    });
}

function edit(edition: number): void {
  const source = readFileSync(appFile, "utf8");
  writeFileSync(appFile, source.replace(/const edition = \d+;/, `const edition = ${edition};`));
}

test("--watch restarts after each edit while messages flow: every number handled once, each edition after the last", async () => {
  // The test writes the stream file for the whole run; the service only reads it.
  const producer = FileProducer.open(streamFile);
  const cli = startCli(["run", appFile, "--watch"], {
    cwd: service,
    env: { STREAM_FILE: streamFile, HANDLED_LOG: handledLog },
  });
  let sent = 0;
  let feeding = true;
  const feeder = (async () => {
    while (feeding) {
      sent += 1;
      await producer.send("numbers", new TextEncoder().encode(JSON.stringify({ n: sent })));
      await sleep(10);
    }
  })();
  try {
    await cli.waitFor(/INFO {2}ready app=numbers version=1\.0\.1/);
    await vi.waitFor(() => expect(handled().length).toBeGreaterThanOrEqual(50), {
      timeout: 15_000,
    });

    edit(2);
    await cli.waitFor(/INFO {2}ready app=numbers version=1\.0\.2/);
    await vi.waitFor(() => expect(handled().some((h) => h.edition === 2)).toBe(true), {
      timeout: 15_000,
    });
    const sentAtSecondEdit = sent;

    edit(3);
    await cli.waitFor(/INFO {2}ready app=numbers version=1\.0\.3/);
    await vi.waitFor(() => expect(handled().some((h) => h.edition === 3)).toBe(true), {
      timeout: 15_000,
    });
    // Messages were still being sent across both restarts.
    expect(sent).toBeGreaterThan(sentAtSecondEdit);
  } finally {
    feeding = false;
    await feeder;
    producer.close();
  }
  const total = sent;
  await vi.waitFor(() => expect(handled().length).toBeGreaterThanOrEqual(total), {
    timeout: 20_000,
  });
  await sleep(500); // time for a duplicate, were there one, to show

  const lines = handled();
  const numbers = lines.map((h) => h.n).sort((a, b) => a - b);
  expect(numbers).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  // One process at a time: the old edition had drained and exited before the new one handled any.
  const editions = lines.map((h) => h.edition);
  expect(editions).toEqual([...editions].sort((a, b) => a - b));
  for (const edition of [1, 2, 3]) expect(editions).toContain(edition);

  // Two edits, two restarts: the stream file, the positions and the log changing all along
  // restarted nothing.
  const log = cli.stderr();
  expect(log.match(/INFO {2}ready app=numbers/g)).toHaveLength(3);
  expect(log.match(/changed: restarting once the running service has drained/g)).toHaveLength(2);
  expect(log).toMatch(/changed="app\.ts"|changed=app\.ts/);

  cli.signal("SIGTERM");
  expect(await cli.exited).toEqual({ code: 0, signal: null });
  // Each of the three processes drained cleanly.
  expect(cli.stderr().match(/INFO {2}stopped failed=false aborted=false/g)).toHaveLength(3);
  expect(cli.stderr()).not.toMatch(/ERROR/);
}, 90_000);

test("--watch: a service that fails to start waits for the edit that fixes it", async () => {
  const broken = join(dir, "broken");
  mkdirSync(broken);
  symlinkSync(join(packageRoot, "node_modules"), join(broken, "node_modules"));
  writeFileSync(join(broken, "package.json"), '{ "type": "module", "private": true }\n');
  const file = join(broken, "app.ts");
  copyFileSync(join(fixtures, "failingStart.ts"), file);
  const cli = startCli(["run", file, "--watch"], { cwd: broken });
  await cli.waitFor(
    /ERROR startup failed error="subscriber \\"jobs\\": two subscribers share this name/,
  );
  await cli.waitFor(
    /WARN {2}the service exited; it starts again at the next change supervisor=watch exit="exit 1"/,
  );

  // The fix: the second subscriber gets a name of its own.
  const source = readFileSync(file, "utf8");
  const fixed = source.replace(
    'b.subscriber("jobs").handle(() => {});\n});',
    'b.subscriber("jobs").name("jobs-audit").handle(() => {});\n});',
  );
  expect(fixed).not.toBe(source);
  writeFileSync(file, fixed);
  await cli.waitFor(/INFO {2}changed: starting the service supervisor=watch changed=app\.ts/);
  await cli.waitFor(/INFO {2}ready app=clash version=1\.0\.0 subscribers="jobs,jobs-audit"/);
  cli.signal("SIGTERM");
  expect(await cli.exited).toEqual({ code: 0, signal: null });
});
