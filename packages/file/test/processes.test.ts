import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isRustStreamError } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import {
  decodeFile,
  FileConsumer,
  FileProducer,
  fileErrorDetail,
  lockPathOf,
} from "../src/formatEntry.js";
import { rejection } from "./caught.js";
import { tempDir } from "./tempDir.js";

const dir = tempDir("ruststream-file-processes-");
const CHILD = fileURLToPath(new URL("./child/writer.ts", import.meta.url));
const PACKAGE = fileURLToPath(new URL("../", import.meta.url));

/** Starts the writer script in its own Node process and waits until it has written once. */
async function writer(path: string, mode: "hold" | "spam"): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ["--conditions=@ruststream/source", "--import", "tsx", CHILD, path, mode],
    { cwd: PACKAGE, stdio: ["ignore", "pipe", "pipe"] },
  );
  let errors = "";
  child.stderr!.on("data", (d) => {
    errors += d;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes("ready")) resolve();
    });
    child.on("exit", (code) =>
      reject(new Error(`writer exited (${code}) before writing: ${errors}`)),
    );
  });
  return child;
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.on("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

describe("two processes on one file", () => {
  it("refuses a second writer naming the first, and takes over once that one is killed", async () => {
    const path = join(dir, "locked.ss");
    const child = await writer(path, "hold");
    let refused: unknown;
    try {
      FileProducer.open(path);
    } catch (error) {
      refused = error;
    }
    expect(isRustStreamError(refused, "broker-failure")).toBe(true);
    expect(fileErrorDetail(refused)).toMatchObject({ code: "FILE_LOCKED" });
    expect((refused as Error).message).toContain(String(child.pid));
    // The killed process leaves its lock file behind: a stale lock, taken over.
    await kill(child);
    expect(readFileSync(lockPathOf(path), "utf8").trim()).toBe(String(child.pid));
    const producer = FileProducer.open(path);
    expect((await producer.send("events", new Uint8Array([1]))).seq).toBe(2n);
    producer.close();
  });

  it("a reader in this process follows what another process appends", async () => {
    const path = join(dir, "tail.ss");
    const child = await writer(path, "spam");
    try {
      const consumer = await FileConsumer.open(path, {
        from: "end",
        follow: true,
        streamKey: "events",
      });
      const seen: bigint[] = [];
      for await (const m of consumer) {
        seen.push(m.seq);
        if (seen.length === 2000) break;
      }
      // Live, in order, nothing skipped: all 2000, not whatever came before the reader ended.
      const first = seen[0] ?? 0n;
      expect(seen).toEqual(Array.from({ length: 2000 }, (_, i) => first + BigInt(i)));
    } finally {
      await kill(child);
    }
  });

  it("a process killed mid-write leaves a file a reopening producer continues safely", async () => {
    const path = join(dir, "killed.ss");
    const child = await writer(path, "spam");
    // Killed once it has written a good many frames (512-byte payloads), however slowly it runs.
    while (statSync(path).size < 128 + 40 * 600) await new Promise((r) => setTimeout(r, 10));
    await kill(child);
    // The kill may land between writes; cutting into the last frame makes the tear certain.
    const size = statSync(path).size;
    truncateSync(path, size - 100);
    const torn = decodeFile(new Uint8Array(readFileSync(path)));
    expect(torn.outcome.status).toBe("damaged");
    const intact = torn.messages.filter((m) => m.streamKey === "events");
    const last = intact.at(-1)!.seq;
    expect(last).toBeGreaterThan(10n);

    // Readers get every complete message, then the damage with its offset.
    const reader = await FileConsumer.open(path, { streamKey: "events" });
    let count = 0;
    const damage = await rejection(async () => {
      for await (const _ of reader) count++;
    });
    expect(isRustStreamError(damage, "broker-failure")).toBe(true);
    expect(fileErrorDetail(damage)).toMatchObject({
      code: "FILE_TRUNCATED",
      offset: torn.outcome.end,
    });
    expect(count).toBe(intact.length);

    // The writer's lock is stale, the torn tail is cut, sequences continue after the last good frame.
    const producer = FileProducer.open(path);
    const receipt = await producer.send("events", new TextEncoder().encode("after the crash"));
    await producer.flush();
    producer.close();
    expect(receipt.seq).toBe(last + 1n);
    expect(receipt.offset).toBe(torn.outcome.end);
    const healed = decodeFile(new Uint8Array(readFileSync(path)));
    expect(healed.outcome.status).toBe("clean");
    expect(healed.messages.map((m) => m.seq)).toEqual([...intact.map((m) => m.seq), last + 1n]);
  }, 30_000);
});
