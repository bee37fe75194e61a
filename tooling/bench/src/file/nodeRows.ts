// Our rows by key, for a row's process of its own (../rows/rowChild.ts runs `runRow`): the format's
// reader (`FileConsumer`) and the full app replaying the crate's file, our follower while the
// crate's writer appends, our producer driven two ways, and a plain `fs.writeSync` of the frames.
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { bytes, RustStream } from "@ruststream/core";
import { FileBroker, FileStream } from "@ruststream/file";
import { decodeFile, FileConsumer, FileProducer } from "@ruststream/file/format";
import { appendWithRust } from "./crateRows.js";
import { benchKey, burst, type FileTrial, messageBytes, type Run } from "./trial.js";

const since = (started: number, messages: number): Run => ({
  messages,
  seconds: (performance.now() - started) / 1000,
});

/** The format's reader over the whole file: the raw loop of a replay. */
async function replayOurs(t: FileTrial): Promise<Run> {
  const started = performance.now();
  const consumer = await FileConsumer.open(t.path, { streamKey: benchKey });
  let n = 0;
  for await (const _ of consumer) n++;
  return since(started, n);
}

/**
 * The full app replaying the file: a RustStream app on FileBroker (the file must exist; no consumer
 * name, so no position is stored beside it), one subscriber on the crate's stream key from its
 * beginning, the bytes codec (the crate's payloads are not JSON), a handler that only counts. Timed
 * from the app's start to the last message handled and settled (`whenIdle`), as the reader's loop
 * is timed from its open to its end.
 */
async function replayApp(t: FileTrial): Promise<Run> {
  let n = 0;
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const app = new RustStream({ name: "bench-file", version: "0" }).broker(
    new FileBroker({ path: t.path, existingOnly: true }),
    (b) => {
      b.subscriber(new FileStream(benchKey, { start: "beginning" }), { codec: bytes }).handle(
        () => {
          if (++n === t.messages) finish();
        },
      );
    },
  );
  const started = performance.now();
  const running = await app.start();
  await done;
  await running.whenIdle();
  const run = since(started, n);
  await running.stop();
  return run;
}

/** Our follower on the primed file at `t.path` while the crate's writer appends; first to last. */
async function tailOurs(t: FileTrial): Promise<Run> {
  const consumer = await FileConsumer.open(t.path, { streamKey: benchKey, follow: true });
  const writing = appendWithRust(t.rust, t.path, t.messages);
  let n = 0;
  let started = 0;
  for await (const _ of consumer) {
    if (n++ === 0) started = performance.now();
    if (n === t.messages) break;
  }
  const run = since(started, n);
  await writing;
  return run;
}

/** A publisher that awaits every send: one handover to the OS per message. */
async function writeOurs(t: FileTrial): Promise<Run> {
  const p = FileProducer.open(t.path);
  const payload = new Uint8Array(messageBytes).fill(0x61);
  const started = performance.now();
  for (let i = 0; i < t.messages; i++) await p.send(benchKey, payload);
  const run = since(started, t.messages);
  p.close();
  return run;
}

/** Publishes of one turn share one write: `burst` sends awaited together. */
async function writeBursts(t: FileTrial): Promise<Run> {
  const p = FileProducer.open(t.path);
  const payload = new Uint8Array(messageBytes).fill(0x61);
  const started = performance.now();
  for (let i = 0; i < t.messages; i += burst) {
    const sends: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(t.messages, i + burst); j++) sends.push(p.send(benchKey, payload));
    await Promise.all(sends);
  }
  const run = since(started, t.messages);
  p.close();
  return run;
}

/**
 * The floor of any writer: the exact frame bytes of the crate's file (`t.framesOf`, read and split
 * untimed, so this row's peak holds that whole file), one sequential `fs.writeSync` per message.
 */
function writePlain(t: FileTrial): Run {
  if (t.framesOf === undefined) throw new Error("the plain write needs framesOf");
  const whole = readFileSync(t.framesOf);
  const frames = decodeFile(new Uint8Array(whole)).messages.map((m) =>
    whole.subarray(m.offset, m.end),
  );
  const fd = openSync(t.path, "w");
  const started = performance.now();
  for (const f of frames) writeSync(fd, f);
  const run = since(started, frames.length);
  closeSync(fd);
  return run;
}

const nodeRows: Readonly<Record<string, (t: FileTrial) => Promise<Run> | Run>> = {
  "replay-ours": replayOurs,
  "replay-app": replayApp,
  "tail-ours": tailOurs,
  "write-plain": writePlain,
  "write-ours": writeOurs,
  "write-burst": writeBursts,
};

/** The row module's entry (../rows/protocol.ts). */
export async function runRow(key: string, input: unknown): Promise<Run> {
  const row = nodeRows[key];
  if (row === undefined) throw new Error(`not a row of ours: ${key}`);
  return row(input as FileTrial);
}
