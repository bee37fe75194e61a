// The stream file: the app's publish against the package's lowest writer (FileProducer of
// @ruststream/file/format), each writing the same entries (the payload in RustStream's header
// envelope with the content type and the partition key, as the broker writes it) to a fresh .ss
// file, each send's receipt (its write done) awaited.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bytes, HeaderMap, RustStream } from "@ruststream/core";
import { FileBroker, PARTITION_KEY_HEADER } from "@ruststream/file";
import { decodeFile, encodeEnvelope, FileProducer } from "@ruststream/file/format";
import { bytesContentType, keyOf, payloadOf } from "./message.js";
import { expectStored, type PublishRow } from "./row.js";
import { type Timed, windowed } from "./window.js";

const table = "stream file";
const streamKey = "orders";
const dir = mkdtempSync(join(tmpdir(), "ruststream-publish-bench-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
let files = 0;

/** The headers the broker writes for a bytes publish of message `i`. */
function headersOf(i: number): HeaderMap {
  const headers = new HeaderMap();
  headers.set("content-type", bytesContentType);
  headers.set(PARTITION_KEY_HEADER, keyOf(i));
  return headers;
}

async function onFreshFile(
  row: string,
  count: number,
  publish: (path: string) => Promise<Timed>,
): Promise<Timed> {
  const path = join(dir, `f${files++}.ss`);
  const timed = await publish(path);
  const written = decodeFile(readFileSync(path)).messages.filter((m) => m.streamKey === streamKey);
  expectStored(row, path, written.length, count);
  rmSync(path);
  return timed;
}

export function fileRows(): PublishRow[] {
  return [
    {
      name: "raw FileProducer",
      broker: table,
      baseline: true,
      run: (count, depth) =>
        onFreshFile("raw FileProducer", count, async (path) => {
          const producer = FileProducer.open(path);
          try {
            return await windowed(count, depth, (i) =>
              producer.send(streamKey, encodeEnvelope(payloadOf(i), headersOf(i))),
            );
          } finally {
            producer.close();
          }
        }),
    },
    {
      name: "app.publish",
      broker: table,
      baseline: false,
      run: (count, depth) =>
        onFreshFile("app.publish", count, async (path) => {
          const app = new RustStream({ name: "bench-publish", version: "0" }).broker(
            new FileBroker({ path }),
            () => {},
          );
          const running = await app.start();
          try {
            return await windowed(count, depth, (i) =>
              running.publish(streamKey, payloadOf(i), { codec: bytes, partitionKey: keyOf(i) }),
            );
          } finally {
            await running.stop();
          }
        }),
    },
  ];
}
