// A second process for the cross-process tests: `hold` opens the file's writer and waits to be
// killed; `spam` appends 512-byte messages as fast as it can until it is killed.
import { FileProducer } from "../../src/formatEntry.js";

const [path, mode] = process.argv.slice(2);
if (path === undefined || (mode !== "hold" && mode !== "spam")) {
  throw new Error("usage: writer.ts <file.ss> hold|spam");
}
const producer = FileProducer.open(path, { beaconInterval: 4096 });
const payload = new Uint8Array(512).fill(0x61);
await producer.send("events", payload);
process.stdout.write("ready\n");
if (mode === "hold") {
  setInterval(() => {}, 1 << 30);
} else {
  for (;;) {
    const burst: Promise<unknown>[] = [];
    for (let i = 0; i < 64; i++) burst.push(producer.send("events", payload));
    await Promise.all(burst);
  }
}
