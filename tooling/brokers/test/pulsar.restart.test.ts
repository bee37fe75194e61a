import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { exclusive, restart } from "../src/pulsar.mjs";
import { requireEnv } from "../src/requireEnv.mjs";
import { admin } from "./pulsarAdmin.js";

// Restarts the one Pulsar standalone every project's live tests share, so it runs in a project of
// its own (vitest.restart.config.ts) whose group starts once every other project's has ended.

/** Runs test/java/PulsarBacklog.java (Pulsar's Java client, from the broker's jars); answers its stdout. */
async function javaClient(args: string[]): Promise<string> {
  const program = join(import.meta.dirname, "java", "PulsarBacklog.java");
  const { stdout } = await promisify(execFile)(
    "java",
    ["-cp", `${requireEnv("PULSAR_LIBS")}/*`, program, ...args],
    { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout;
}

describe("pulsar (a hard restart)", () => {
  it(
    "a topic's backlog and its subscription's cursor survive a hard restart",
    () =>
      // Restarts the shared standalone: alone on it, or another such test dies mid-way by luck.
      exclusive(async () => {
        const url = requireEnv("PULSAR_URL");
        const name = `smoke-restart-${randomUUID()}`;
        const topic = `persistent://public/default/${name}`;
        // 100 messages sent, each confirmed persisted; the first 40 received and acknowledged.
        await javaClient(["before", url, topic, "s", "100", "40"]);

        // A crash, not a polite shutdown: only what the bookie and the metadata store wrote survives.
        const started = Date.now();
        await restart({ hard: true });
        const restartMs = Date.now() - started;

        const stats = (await (
          await admin(`/admin/v2/persistent/public/default/${name}/stats`)
        ).json()) as { subscriptions: Record<string, { msgBacklog: number }> };
        expect(stats.subscriptions.s?.msgBacklog).toBe(60);
        const delivered = (await javaClient(["after", url, topic, "s"]))
          .split("\n")
          .filter((line) => line.startsWith("delivered "))
          .map((line) => Number(line.slice("delivered ".length)));
        // The backlog, whole and in order, from the same subscription: nothing it acknowledged.
        expect(delivered).toEqual(Array.from({ length: 60 }, (_, i) => 40 + i));
        await admin(`/admin/v2/persistent/public/default/${name}?force=true`, {
          method: "DELETE",
        });
        process.stderr.write(
          `[pulsar restart test] restart({ hard: true }) took ${restartMs} ms\n`,
        );
      }),
    300_000,
  );
});
