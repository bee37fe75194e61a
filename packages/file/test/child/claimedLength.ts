// Decodes a file whose one frame claims a payload of nearly 4 GiB (the format's limit, so the
// decoder's default lets it through) and holds 10 bytes, and prints the outcome as JSON. The test
// runs it with the address space capped below the claimed size: a reader that allocated the
// claimed size before the bytes existed fails here with a RangeError instead of an outcome.
import { decodeFile, FileEncoder, fileErrorDetail } from "../../src/formatEntry.js";

const { encoder, bytes } = FileEncoder.create({
  fileName: "claimed.ss",
  createdAt: 1,
  beaconInterval: 1024,
});
const frame = encoder.write({
  streamKey: "k",
  shard: 0n,
  seq: 1n,
  timestamp: 2,
  payload: new Uint8Array(10),
});
// The payload length field: after the key length byte, the key "k" and shard, seq, timestamp.
new DataView(frame.buffer, frame.byteOffset).setUint32(1 + 1 + 24, 0xffff_fff0);
const file = new Uint8Array(bytes.length + frame.length);
file.set(bytes);
file.set(frame, bytes.length);

try {
  const { outcome, messages } = decodeFile(file);
  const detail = outcome.status === "damaged" ? fileErrorDetail(outcome.error) : undefined;
  console.log(JSON.stringify({ status: outcome.status, messages: messages.length, ...detail }));
} catch (error) {
  console.log(JSON.stringify({ thrown: `${(error as Error).name}: ${(error as Error).message}` }));
}
