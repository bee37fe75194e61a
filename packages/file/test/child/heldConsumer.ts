// The consumer the backlog memory test measures (backlogMemory.test.ts): the whole app, one named
// subscriber reading a stream key of the file from its beginning with the default read settings
// (1 MiB reads, one read ahead, prefetch 256, one worker), whose handler is held on its first
// message until the test releases it. In a process of its own, started with --expose-gc, so its
// heap is its own.
import { RustStream } from "@ruststream/core";
import { heldHandler } from "@ruststream/tooling-testkit";
import { FileBroker, FileStream } from "../../src/index.js";

const [path, key] = process.argv.slice(2);
if (path === undefined || key === undefined) {
  throw new Error("usage: heldConsumer.ts <file.ss> <stream key>");
}

const held = heldHandler();
const app = new RustStream({ name: "backlog-memory", version: "1.0.0" }).broker(
  new FileBroker({ path, consumer: "backlog-memory" }),
  (b) => {
    b.subscriber(new FileStream(key, { consumer: "backlog-memory", start: "beginning" })).handle(
      held.handle,
    );
  },
);
held.serve(await app.start());
