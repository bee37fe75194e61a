import { fileError } from "../format/errors.js";
import { type SendReceipt, SharedWriter, type WriterOptions } from "./sharedWriter.js";

export type ProducerOptions = WriterOptions;

/**
 * Appends messages to a `.ss` file. Producers on one path in one process share a writer; across
 * processes a lock file admits one writer at a time. Opening an existing file resumes every
 * stream's sequence and checksum state and cuts off anything after the last complete frame.
 */
export class FileProducer {
  readonly #writer: SharedWriter;
  #closed = false;

  private constructor(writer: SharedWriter) {
    this.#writer = writer;
  }

  /**
   * Opens (or creates) the file for writing. Throws `FILE_LOCKED` when another live process
   * writes it, `FILE_NOT_SEASTREAMER` when it is not a stream file: nothing is written then.
   */
  static open(path: string, options: ProducerOptions = {}): FileProducer {
    return new FileProducer(SharedWriter.acquire(path, options));
  }

  get path(): string {
    return this.#writer.path;
  }

  get beaconInterval(): number {
    return this.#writer.beaconInterval;
  }

  /**
   * Appends one message on shard 0 with the next sequence number of its stream. Resolves once the
   * bytes are handed to the operating system (visible to readers, not yet durable: see `flush`).
   * An invalid stream key or an oversized payload throws at once and writes nothing.
   */
  send(streamKey: string, payload: Uint8Array, timestamp?: number): Promise<SendReceipt> {
    this.#assertOpen();
    return this.#writer.send(streamKey, payload, timestamp);
  }

  /** Like `send`, written before it returns; for tests that inject synchronously. */
  sendNow(streamKey: string, payload: Uint8Array, timestamp?: number): SendReceipt {
    this.#assertOpen();
    return this.#writer.sendNow(streamKey, payload, timestamp);
  }

  /** Makes everything sent so far (by any producer on the file) durable: fsync. */
  flush(): Promise<void> {
    this.#assertOpen();
    return this.#writer.flush();
  }

  /**
   * Writes the end-of-stream marker (readers stop there), flushes and closes this producer. The
   * file is ended for every producer sharing it; reopening it later appends after the marker's
   * place, overwriting it.
   */
  async end(): Promise<void> {
    this.#assertOpen();
    try {
      await this.#writer.end();
    } finally {
      this.close();
    }
  }

  /** Releases this producer; the last one on a file closes it and frees the lock. No flush. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#writer.release();
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw fileError(
        "PRODUCER_CLOSED",
        `This producer of ${this.#writer.path} was closed: open a new one`,
      );
    }
  }
}
