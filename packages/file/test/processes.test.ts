import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isRustStreamError } from "@ruststream/core";
import { runtimeName } from "@ruststream/core/broker";
import { childEnv, scriptCommand } from "@ruststream/tooling-testkit";
import { describe, expect, it } from "vitest";
import {
  decodeEnvelope,
  decodeFile,
  FileConsumer,
  FileProducer,
  fileErrorDetail,
  lockPathOf,
  readMark,
} from "../src/formatEntry.js";
import { FileBroker, FileStream } from "../src/index.js";
import { rejection } from "./caught.js";
import { tempDir, text, utf8 } from "./tempDir.js";

const dir = tempDir("ruststream-file-processes-");
const CHILD = fileURLToPath(new URL("./child/writer.ts", import.meta.url));
const STALLED = fileURLToPath(new URL("./child/stalledCommit.ts", import.meta.url));
const PACKAGE = fileURLToPath(new URL("../", import.meta.url));

/** Starts the writer script in its own process and waits until it has written once. */
function writer(path: string, mode: "hold" | "spam"): Promise<ChildProcess> {
  return child(CHILD, [path, mode], "ready");
}

/** Starts `script` in its own process, on the test's runtime, and waits until it prints `word`. */
async function child(script: string, args: string[], word: string): Promise<ChildProcess> {
  const [command, ...rest] = scriptCommand(script);
  const child = spawn(command!, [...rest, ...args], {
    cwd: PACKAGE,
    env: childEnv(),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let errors = "";
  child.stderr!.on("data", (d) => {
    errors += d;
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes(word)) resolve();
    });
    child.on("exit", (code) =>
      reject(new Error(`${script} exited (${code}) before "${word}": ${errors}`)),
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

  // The stalled writer (child/stalledCommit.ts) replaces node:fs's writevSync and relies on Node's
  // syncBuiltinESMExports to reach the writer's named import; Bun and Deno do not carry the
  // replacement over to named imports, so there the write never stalls and the child never says so.
  it.skipIf(runtimeName() !== "node")(
    `a writer killed mid-commit: no reader hands out part of its transaction, and the next writer cuts it whole${runtimeName() === "node" ? "" : " (skipped: Node only, the stalled writer needs syncBuiltinESMExports)"}`,
    async () => {
      const path = join(dir, "commits.ss");
      // A follower of "a" through the broker, reading as the transactions land.
      const follower = await new FileBroker({ path }).connect();
      const sub = await follower.subscribe(new FileStream("a", { start: "beginning" }));
      const handedOut: string[] = [];
      const following = (async () => {
        for (;;) {
          const next = await sub.next();
          if (next.done) return;
          const [n, i] = text(next.value.payload).split(" ");
          handedOut.push(i === undefined ? n! : `${n} ${i}`);
          if (n === "after") return;
        }
      })();
      // And one of the format's readers, whose offset says how far it has read.
      const tail = await FileConsumer.open(path, {
        streamKey: "a",
        follow: true,
        from: "beginning",
      });
      const tailed: string[] = [];
      const tailing = (async () => {
        for (;;) {
          const m = await tail.next();
          if (m === undefined) return;
          const [n, i] = text(decodeEnvelope(m.payload).payload).split(" ");
          tailed.push(i === undefined ? n! : `${n} ${i}`);
          if (n === "after") return;
        }
      })();

      // Commits 1 to 19 are whole; the 20th stops after its first 10,000 bytes, and is killed there.
      const stalled = await child(STALLED, [path], "stalled");
      await kill(stalled);
      const torn = decodeFile(new Uint8Array(readFileSync(path)));
      expect(torn.outcome.status).toBe("damaged");
      const bodies = torn.messages.map((m) => text(decodeEnvelope(m.payload).payload));
      const ofTwentieth = bodies.filter((b) => b.startsWith("20 "));
      // Whole frames of the 20th transaction are in the file: what no reader may hand out.
      expect(ofTwentieth.length).toBeGreaterThan(5);
      expect(readMark(torn.messages.at(-1)!.payload)).toMatchObject({
        index: ofTwentieth.length,
        count: 64,
      });

      // The tail has read every whole frame of the 20th (its offset is past the last), and handed
      // out the 19 commits' messages, none of the 20th's.
      const committed = Array.from({ length: 19 }, (_, t) =>
        Array.from({ length: 32 }, (_, k) => `${t + 1} ${2 * k + 1}`),
      ).flat();
      while (tail.offset < torn.messages.at(-1)!.end) await new Promise((r) => setTimeout(r, 5));
      await new Promise((resolve) => setImmediate(resolve));
      expect(tailed).toEqual(committed);

      // A reader opened now reads every message of the 19 commits and stops at the torn frame.
      const replayed: string[] = [];
      const damage = await rejection(async () => {
        for await (const m of await FileConsumer.open(path, { streamKey: "a" })) {
          replayed.push(text(decodeEnvelope(m.payload).payload).split(" ", 2).join(" "));
        }
      });
      expect(fileErrorDetail(damage)?.code).toBe("FILE_TRUNCATED");
      expect(replayed).toEqual(committed);

      // The next writer takes the dead writer's lock, cuts the 20th transaction back to its start and
      // writes on there: the follower's next delivery is the message it writes.
      const next = await new FileBroker({ path }).connect();
      const publisher = await next.defaultPublishPolicy().pair(next);
      const receipt = await publisher.publish({ name: "a", payload: utf8("after") });
      expect(receipt.position).toBe(String(19 * 32 + 1));
      await next.shutdown();
      await following;
      await tailing;
      expect(handedOut).toEqual([...committed, "after"]);
      expect(tailed).toEqual([...committed, "after"]);
      tail.close();
      await follower.shutdown();

      const healed = decodeFile(new Uint8Array(readFileSync(path)));
      expect(healed.outcome.status).toBe("clean");
      const kept = healed.messages.map((m) => text(decodeEnvelope(m.payload).payload));
      expect(kept.filter((b) => b.startsWith("20 "))).toEqual([]);
      expect(healed.messages.filter((m) => m.streamKey === "b").length).toBe(19 * 32);
    },
    60_000,
  );
});
