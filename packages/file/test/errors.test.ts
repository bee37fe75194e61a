import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ErrorCode, isRustStreamError, MemoryBroker } from "@ruststream/core";
import { describe, expect, it } from "vitest";
import {
  decodeFile,
  decodeHeader,
  FileEncoder,
  type FileErrorCode,
  FileProducer,
  fileErrorDetail,
  lockPathOf,
  validateStreamKey,
} from "../src/formatEntry.js";
import { FileBroker, FilePublish, FileStream, sidecarPath } from "../src/index.js";
import { rejection, thrown } from "./caught.js";
import { tempDir, utf8 } from "./tempDir.js";

// One error class: every failure is core's RustStreamError, its `code` core's, the file's own code
// and offset its detail. These pin which core code each file code is, each raised for real.

const dir = tempDir();
let n = 0;
const fresh = () => join(dir, `e${++n}.ss`);
const header = { fileName: "e.ss", createdAt: 1_700_000_000_000, beaconInterval: 1024 };
const ok = { streamKey: "k", shard: 0n, seq: 1n, timestamp: 1_700_000_000_001, payload: utf8("x") };

function expectFileError(error: unknown, code: ErrorCode, file: FileErrorCode): void {
  expect(isRustStreamError(error, code), `${String(error)}`).toBe(true);
  expect(fileErrorDetail(error)?.code).toBe(file);
}

describe("each file code is one core code", () => {
  it("FILE_NOT_SEASTREAMER is invalid-argument", () => {
    const error = thrown(() => decodeHeader(utf8("just some text, not a stream file")));
    expectFileError(error, "invalid-argument", "FILE_NOT_SEASTREAMER");
  });

  it("FILE_VERSION_UNSUPPORTED is invalid-argument", () => {
    const { bytes } = FileEncoder.create(header);
    bytes[2] = 2;
    expectFileError(
      thrown(() => decodeHeader(bytes)),
      "invalid-argument",
      "FILE_VERSION_UNSUPPORTED",
    );
  });

  it("FILE_TRUNCATED is broker-failure, with its offset in the detail and the message", () => {
    const d = decodeFile(FileEncoder.create(header).bytes.subarray(0, 100));
    const error = d.outcome.status === "damaged" ? d.outcome.error : undefined;
    expectFileError(error, "broker-failure", "FILE_TRUNCATED");
    expect(fileErrorDetail(error)?.offset).toBe(0);
    expect((error as Error).message).toMatch(/\(at byte 0\)$/);
  });

  it("FILE_CORRUPT is broker-failure", () => {
    const { bytes } = FileEncoder.create(header);
    new DataView(bytes.buffer).setUint32(4 + header.fileName.length + 8, 64);
    expectFileError(
      thrown(() => decodeHeader(bytes)),
      "broker-failure",
      "FILE_CORRUPT",
    );
  });

  it("FRAME_TOO_LARGE is broker-failure", () => {
    const { encoder, bytes } = FileEncoder.create(header);
    const file = Buffer.concat([bytes, encoder.write({ ...ok, payload: new Uint8Array(100) })]);
    const d = decodeFile(file, { maxMessageBytes: 99 });
    const error = d.outcome.status === "damaged" ? d.outcome.error : undefined;
    expectFileError(error, "broker-failure", "FRAME_TOO_LARGE");
    expect(fileErrorDetail(error)?.offset).toBe(bytes.length);
  });

  it("INVALID_STREAM_KEY and INVALID_ARGUMENT are invalid-argument", () => {
    expectFileError(
      thrown(() => validateStreamKey("a b")),
      "invalid-argument",
      "INVALID_STREAM_KEY",
    );
    const { encoder } = FileEncoder.create(header);
    const negative = thrown(() => encoder.write({ ...ok, seq: -1n }));
    expectFileError(negative, "invalid-argument", "INVALID_ARGUMENT");
  });

  it("PAYLOAD_TOO_LARGE is publish-refused", () => {
    const { encoder } = FileEncoder.create(header, { maxMessageBytes: 4 });
    const error = thrown(() => encoder.write({ ...ok, payload: new Uint8Array(5) }));
    expectFileError(error, "publish-refused", "PAYLOAD_TOO_LARGE");
  });

  it("FILE_LOCKED is broker-failure", () => {
    const path = fresh();
    writeFileSync(lockPathOf(path), `${process.ppid}\n`);
    expectFileError(
      thrown(() => FileProducer.open(path)),
      "broker-failure",
      "FILE_LOCKED",
    );
  });

  it("PRODUCER_CLOSED is closed", async () => {
    const producer = FileProducer.open(fresh());
    await producer.end();
    const error = thrown(() => producer.send("k", utf8("x")));
    expectFileError(error, "closed", "PRODUCER_CLOSED");
  });

  it("FILE_IO is broker-failure, the operating system's error its cause: an ack that cannot store its position", async () => {
    const path = fresh();
    const connected = await new FileBroker({ path }).connect();
    const subscription = await connected.subscribe(new FileStream("k", { consumer: "c" }));
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    await publisher.publish({ name: "k", payload: utf8("x") });
    const delivery = (await subscription.next()).value!;
    // The position is written to a temporary file first: a folder in its place makes that fail.
    mkdirSync(`${sidecarPath(path, "c", "k")}.tmp`);
    const error = await rejection(async () => delivery.ack());
    expectFileError(error, "broker-failure", "FILE_IO");
    expect((error as Error).cause).toMatchObject({ code: "EISDIR" });
    await connected.shutdown();
  });
});

describe("the broker's own errors over a file failure keep the file's detail", () => {
  it("a publish to a file another process writes: broker-failure, FILE_LOCKED", async () => {
    const path = fresh();
    const connected = await new FileBroker({ path }).connect();
    writeFileSync(lockPathOf(path), `${process.ppid}\n`);
    const publisher = await connected.defaultPublishPolicy().pair(connected);
    const error = await rejection(() => publisher.publish({ name: "k", payload: utf8("x") }));
    expectFileError(error, "broker-failure", "FILE_LOCKED");
    expect(fileErrorDetail((error as Error).cause)?.code).toBe("FILE_LOCKED");
    await connected.shutdown();
  });

  it("connecting to a file that is not a stream file: invalid-argument, FILE_NOT_SEASTREAMER", async () => {
    const path = fresh();
    writeFileSync(path, "x".repeat(200));
    const error = await rejection(() => new FileBroker({ path }).connect());
    expectFileError(error, "invalid-argument", "FILE_NOT_SEASTREAMER");
  });

  it("the file publish policy pairs only with a file connection: foreign-value otherwise", async () => {
    const memory = await new MemoryBroker().connect();
    const error = await rejection(() => new FilePublish().pair(memory));
    expect(isRustStreamError(error, "foreign-value")).toBe(true);
    expect((error as Error).message).toMatch(/"memory" connection/);
    await memory.shutdown();
  });

  it("any other error has no file detail", () => {
    expect(fileErrorDetail(new Error("x"))).toBeUndefined();
    expect(fileErrorDetail(undefined)).toBeUndefined();
    const badName = thrown(() => new FileStream("k", { consumer: "no spaces" }));
    expect(isRustStreamError(badName, "invalid-argument")).toBe(true);
    expect(fileErrorDetail(badName)).toBeUndefined();
  });
});
