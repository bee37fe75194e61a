import { closeSync, existsSync, mkdtempSync, openSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Broker, ConnectOptions, DescribesServer, ServerDescription } from "@ruststream/core";
import {
  brokerMark,
  describeMark,
  type InProcessBroker,
  type InProcessOptions,
  inProcessMark,
} from "@ruststream/core/broker";
import { ConnectedFileBroker } from "./connection.js";
import { PRIME_STREAM_KEY } from "./names.js";
import { describeFile, type FileBrokerOptions, invalid } from "./options.js";
import { FileStream } from "./sources.js";
import {
  DEFAULT_BEACON_INTERVAL,
  DEFAULT_MAX_MESSAGE_BYTES,
  HEADER_SIZE,
} from "./wire/format/constants.js";
import { fileErrorDetail, wrapFileError } from "./wire/format/errors.js";
import { decodeHeader } from "./wire/format/header.js";
import { fileReader } from "./wire/io/fileReader.js";
import { SharedWriter } from "./wire/io/sharedWriter.js";

/**
 * A broker with no server: RustStream's file broker over a SeaStreamer `.ss` file, which Rust
 * services using `sea-streamer-file` or RustStream's file broker can share. The constructor only
 * records configuration.
 */
export class FileBroker
  implements Broker<ConnectedFileBroker>, InProcessBroker<ConnectedFileBroker>, DescribesServer
{
  readonly [brokerMark] = "file";
  readonly [inProcessMark] = true as const;
  readonly [describeMark] = true as const;
  readonly options: FileBrokerOptions;

  constructor(options: FileBrokerOptions) {
    if (typeof options?.path !== "string" || options.path.length === 0) {
      throw invalid('FileBroker needs a path: new FileBroker({ path: "data/app.ss" })');
    }
    const interval = options.beaconInterval ?? DEFAULT_BEACON_INTERVAL;
    if (!Number.isSafeInteger(interval) || interval <= 0 || interval % 1024 !== 0) {
      throw invalid(`beaconInterval ${interval}: give a positive multiple of 1024 bytes`);
    }
    const max = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (!Number.isSafeInteger(max) || max < 1) {
      throw invalid(`maxMessageBytes ${max}: give a whole number of bytes, 1 or more`);
    }
    // Checked now, so a bad name fails where the broker is built, not at the first subscribe.
    if (options.consumer !== undefined) new FileStream("x", { consumer: options.consumer });
    this.options = options;
  }

  /** The file, by its name only, before anything is opened. */
  describeServer(): ServerDescription {
    return describeFile(this.options.path);
  }

  /** No server stands between the process and its file: `connected` until shut down. */
  async connect(options?: ConnectOptions): Promise<ConnectedFileBroker> {
    prepareFile(this.options.path, this.options);
    return new ConnectedFileBroker(this.options, this.options.path, undefined, options?.onState);
  }

  /**
   * The same broker over a private temporary file (removed at shutdown), counting for the test's
   * coordinator: every setting but the path is the production one, so it refuses what the real
   * file refuses, and no test writes the service's real data file.
   */
  async connectInProcess(options: InProcessOptions): Promise<ConnectedFileBroker> {
    const dir = mkdtempSync(join(tmpdir(), "ruststream-file-inprocess-"));
    const path = join(dir, basename(this.options.path));
    prepareFile(path, { ...this.options, existingOnly: false });
    return new ConnectedFileBroker(
      this.options,
      path,
      { dir, coordinator: options.coordinator },
      options.onState,
    );
  }
}

/**
 * Makes sure the file exists and is a stream file. A new one is primed, as RustStream does, with
 * one message on the internal key `ruststream-internal` (readers skip it).
 */
function prepareFile(path: string, options: FileBrokerOptions): void {
  const size = existsSync(path) ? statSync(path).size : -1;
  if (size < 0 && options.existingOnly) {
    throw invalid(
      `${path} does not exist and existingOnly is set: create it first, or drop existingOnly`,
    );
  }
  if (size > HEADER_SIZE) {
    const fd = openSync(path, "r");
    try {
      decodeHeader(fileReader(fd).read(0, HEADER_SIZE));
    } catch (error) {
      throw wrapFileError("invalid-argument", `${path}: ${(error as Error).message}`, error);
    } finally {
      closeSync(fd);
    }
    return;
  }
  let writer: SharedWriter;
  try {
    writer = SharedWriter.acquire(path, {
      ...(options.beaconInterval === undefined ? {} : { beaconInterval: options.beaconInterval }),
      ...(options.maxMessageBytes === undefined
        ? {}
        : { maxMessageBytes: options.maxMessageBytes }),
    });
  } catch (error) {
    // Another process writes it: that process primes it.
    if (fileErrorDetail(error)?.code === "FILE_LOCKED") return;
    throw wrapFileError("invalid-argument", `${path}: ${(error as Error).message}`, error);
  }
  try {
    writer.sendNow(PRIME_STREAM_KEY, new TextEncoder().encode("1"));
  } finally {
    writer.release();
  }
}
