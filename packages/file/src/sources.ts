import { type AddressedSource, RustStreamError } from "@ruststream/core";
import { sourceMark } from "@ruststream/core/broker";
import { isValidStreamKey } from "./wire/format/streamKey.js";

export interface FileStreamOptions {
  /**
   * A consumer name makes the subscription durable: its position is stored beside the file, so a
   * restarted service resumes after the last settled message. Letters, digits, `_` and `-`.
   * Without one, the subscription keeps no position and ack and requeue answer `unsupported`.
   */
  readonly consumer?: string;
  /** Only `tracked` (the default for a named consumer): see the README. */
  readonly commit?: "tracked";
  /**
   * Where a subscription starts when it has no stored position: `"end"` (default, only what is
   * appended from now on) or `"beginning"`.
   */
  readonly start?: "beginning" | "end";
  /** Read the file as recorded and complete at its end, instead of following it (default false). */
  readonly replay?: boolean;
}

const CONSUMER_NAME = /^[A-Za-z0-9_-]{1,100}$/;

/** One stream key of the broker's file. Retry copies are appended to the same stream key. */
export class FileStream implements AddressedSource {
  readonly [sourceMark] = "file";
  readonly copies = "addressed" as const;
  readonly name: string;
  readonly consumer: string | undefined;
  readonly start: "beginning" | "end";
  readonly replay: boolean;

  constructor(streamKey: string, options: FileStreamOptions = {}) {
    if (!isValidStreamKey(streamKey)) {
      throw new RustStreamError(
        "invalid-argument",
        `"${streamKey}" is not a stream key: use 1 to 249 characters of A-Z a-z 0-9 . _ -`,
      );
    }
    if (options.consumer !== undefined && !CONSUMER_NAME.test(options.consumer)) {
      throw new RustStreamError(
        "invalid-argument",
        `consumer "${options.consumer}": use 1 to 100 characters of A-Z a-z 0-9 _ -`,
      );
    }
    const commit: string | undefined = options.commit;
    if (commit !== undefined && commit !== "tracked") {
      throw new RustStreamError(
        "unsupported",
        `commit "${commit}" on a file stream: only "tracked" exists here (with a consumer name)`,
      );
    }
    if (commit !== undefined && options.consumer === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        `commit "tracked" on "${streamKey}" needs a consumer name to store the position under`,
      );
    }
    this.name = streamKey;
    this.consumer = options.consumer;
    this.start = options.start ?? "end";
    this.replay = options.replay ?? false;
  }

  get redeliveryAddress(): string {
    return this.name;
  }
}
