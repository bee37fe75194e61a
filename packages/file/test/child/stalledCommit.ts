// A second process for the crash test: a writer whose disk stops in the middle of a commit. It
// commits transactions of 64 messages, alternately to "a" and "b", each `<transaction> <index>
// <filler>`; the write of the 20th commit puts its first 10,000 bytes in the file, says "stalled"
// and waits there, to be killed mid-commit.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { FileBroker } from "../../src/index.js";

const [path] = process.argv.slice(2);
if (path === undefined) throw new Error("usage: stalledCommit.ts <file.ss>");
const STALLED_COMMIT = 20;
const WRITTEN = 10_000;

let stall = false;
const writevSync = fs.writevSync;
fs.writevSync = ((fd: number, buffers: readonly NodeJS.ArrayBufferView[], position?: number) => {
  let total = 0;
  for (const b of buffers) total += b.byteLength;
  if (!stall || total <= WRITTEN) return writevSync(fd, buffers, position);
  const part: Uint8Array[] = [];
  let left = WRITTEN;
  for (const b of buffers) {
    const take = Math.min(left, b.byteLength);
    if (take === 0) break;
    part.push(new Uint8Array(b.buffer, b.byteOffset, take));
    left -= take;
  }
  writevSync(fd, part, position);
  fs.writeSync(1, "stalled\n");
  // Blocks this process, mid-write, until it is killed.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  return 0;
}) as typeof fs.writevSync;
// The writer imported `writevSync` by name: its binding follows the module object from here on.
syncBuiltinESMExports();

const broker = await new FileBroker({ path, beaconInterval: 4096 }).connect();
const publisher = await broker.defaultPublishPolicy().pair(broker);
const encoder = new TextEncoder();
const filler = "x".repeat(700);
for (let n = 1; ; n++) {
  stall = n === STALLED_COMMIT;
  await publisher.transaction(async (tx) => {
    for (let i = 1; i <= 64; i++) {
      const payload = encoder.encode(`${n} ${i} ${filler}`);
      await tx.publish({ name: i % 2 === 1 ? "a" : "b", payload });
    }
  });
}
