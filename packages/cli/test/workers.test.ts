import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HeaderMap } from "@ruststream/core";
import { RedisBroker } from "@ruststream/redis";
import { requireEnv, sleep, uniqueName } from "@ruststream/tooling-testkit";
import { Redis } from "ioredis";
import { afterAll, expect, test, vi } from "vitest";
import { fixtures, startCli } from "./cli.js";

const dir = mkdtempSync(join(tmpdir(), "cli-workers-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Handled {
  readonly n: number;
  readonly worker: number;
  readonly pid: number;
}

function handledIn(log: string): Handled[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [n, worker, pid] = line.split(" ").map(Number);
      return { n: n!, worker: worker!, pid: pid! };
    });
}

/** The entries each consumer of the group holds unsettled, by consumer name (`XPENDING` summary). */
async function pendingByConsumer(
  redis: Redis,
  stream: string,
  group: string,
): Promise<Map<string, number>> {
  const summary = (await redis.xpending(stream, group)) as [
    number,
    string | null,
    string | null,
    Array<[string, string]> | null,
  ];
  return new Map((summary[3] ?? []).map(([consumer, count]) => [consumer, Number(count)]));
}

test("--workers 2 on one Redis consumer group: a worker killed with SIGKILL is restarted, every message handled, duplicates bounded by what it held", async () => {
  const url = requireEnv("REDIS_URL");
  const stream = uniqueName("cli-workers");
  const group = "cli-workers";
  const log = join(dir, "handled.log");
  const cli = startCli(["run", join(fixtures, "redisWorker.ts"), "--workers", "2"], {
    env: {
      REDIS_URL: url,
      WORKER_STREAM: stream,
      WORKER_GROUP: group,
      HANDLED_LOG: log,
      // Long enough that nothing a live worker is handling is taken from it; short enough for a test.
      RECLAIM_IDLE_MS: "3000",
    },
  });
  const redis = new Redis(url);
  const broker = await new RedisBroker({ url }).connect();
  const publisher = await broker.defaultPublishPolicy().pair(broker);
  let sent = 0;
  let publishing = true;
  // Bursts of 10, so each worker holds a batch read and not yet settled most of the time.
  const producer = (async () => {
    while (publishing) {
      const burst = Array.from({ length: 10 }, () => {
        sent += 1;
        return publisher.publish({
          name: stream,
          payload: new TextEncoder().encode(JSON.stringify({ n: sent })),
          headers: new HeaderMap().set("content-type", "application/json"),
        });
      });
      await Promise.all(burst);
      await sleep(25);
    }
  })();
  let victim: number;
  let heldAtKill: number;
  try {
    await cli.waitForCount(/INFO {2}ready worker=\d app=redis-workers/, 2);
    // Both workers take part: one group, the stream's entries divided between its consumers.
    await vi.waitFor(
      () => {
        const workers = new Set(handledIn(log).map((h) => h.worker));
        expect([...workers].sort()).toEqual([1, 2]);
        expect(handledIn(log).length).toBeGreaterThanOrEqual(150);
      },
      { timeout: 20_000 },
    );
    victim = Number(
      cli.stderr().match(/worker started supervisor=workers worker=1 pid=(\d+)/)?.[1],
    );
    // Killed while it holds entries (read, not yet settled), so the group has work to take back.
    const victimName = async (): Promise<string | undefined> =>
      [...(await pendingByConsumer(redis, stream, group)).entries()].find(
        ([name, count]) => name.includes(`-${victim}-`) && count > 0,
      )?.[0];
    for (let i = 0; i < 200 && (await victimName()) === undefined; i++) await sleep(5);
    process.kill(victim, "SIGKILL");
    // What the killed consumer held (read, unsettled) is all a restart can hand out twice.
    const held = await pendingByConsumer(redis, stream, group);
    const victimConsumer = [...held.keys()].find((name) => name.includes(`-${victim}-`));
    heldAtKill = victimConsumer === undefined ? 0 : held.get(victimConsumer)!;

    await cli.waitFor(
      new RegExp(
        `WARN {2}worker died; restarting it supervisor=workers worker=1 pid=${victim} exit="killed by SIGKILL"`,
      ),
    );
    await cli.waitForCount(/INFO {2}ready worker=\d app=redis-workers/, 3);
    await vi.waitFor(
      () => {
        const restarted = handledIn(log).filter((h) => h.worker === 1 && h.pid !== victim);
        expect(restarted.length).toBeGreaterThanOrEqual(50);
      },
      { timeout: 20_000 },
    );
  } finally {
    publishing = false;
    await producer;
  }
  const total = sent;
  // The killed worker's unsettled entries come back once they have been idle for 3 s.
  await vi.waitFor(() => expect(new Set(handledIn(log).map((h) => h.n)).size).toBe(total), {
    timeout: 30_000,
  });
  await sleep(500);

  const handled = handledIn(log);
  const distinct = new Set(handled.map((h) => h.n));
  expect([...distinct].sort((a, b) => a - b)).toEqual(
    Array.from({ length: total }, (_, i) => i + 1),
  );
  const duplicates = handled.length - distinct.size;
  expect(duplicates).toBeLessThanOrEqual(heldAtKill);
  expect(new Set(handled.map((h) => h.pid)).size).toBe(3);

  cli.signal("SIGTERM");
  expect(await cli.exited).toEqual({ code: 0, signal: null });
  const out = cli.stderr();
  expect(
    out.match(/INFO {2}worker stopped supervisor=workers worker=\d pid=\d+ exit="exit 0"/g),
  ).toHaveLength(2);
  expect(out).toMatch(/INFO {2}all workers stopped supervisor=workers workers=2 clean=true/);
  // Every worker's process drained its app.
  expect(out.match(/INFO {2}stopped worker=\d failed=false aborted=false/g)).toHaveLength(2);
  // Nothing is left unsettled in the group.
  const pending = await pendingByConsumer(redis, stream, group);
  const live = [...pending.entries()].filter(([name]) => !name.includes(`-${victim}-`));
  expect(live.reduce((sum, [, count]) => sum + count, 0)).toBe(0);
  process.stdout.write(
    `workers: ${total} messages, ${duplicates} handled twice, ${heldAtKill} held by the killed worker\n`,
  );
  await broker.shutdown();
  await redis.del(stream, `${stream}.delayed`);
  redis.disconnect();
}, 120_000);
