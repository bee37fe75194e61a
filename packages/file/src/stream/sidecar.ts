import { readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";

/** Where a named consumer keeps its position: beside the stream file, one small file per stream. */
export function sidecarPath(streamPath: string, consumer: string, streamKey: string): string {
  // Consumer names have no dot, so the name and the key never run into each other.
  return `${streamPath}.${consumer}.${streamKey}.pos`;
}

interface Stored {
  readonly version: 1;
  readonly stream: string;
  /** The sequence number to resume at: one past the last message settled without a gap. */
  readonly next: string;
}

/**
 * A consumer's stored position. Each store writes a temporary file and renames it over the old
 * one, so a crash leaves the old position or the new one, never half of either. Stores coalesce:
 * while one write runs, later positions wait and only the newest is written next.
 */
export class Sidecar {
  readonly path: string;
  readonly #stream: string;
  #stored: bigint | undefined;
  #wanted: bigint | undefined;
  #writing: Promise<void> | undefined;
  #failure: unknown;

  constructor(path: string, stream: string) {
    this.path = path;
    this.#stream = stream;
  }

  /** The stored `next`, or undefined when this consumer never stored one. */
  load(): bigint | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const stored = JSON.parse(text) as Partial<Stored>;
    if (stored.version !== 1 || typeof stored.next !== "string" || !/^[0-9]+$/.test(stored.next)) {
      throw new Error(
        `${this.path} is not a RustStream consumer position: delete it to start the consumer afresh`,
      );
    }
    this.#stored = BigInt(stored.next);
    return this.#stored;
  }

  /** Resolves once `next` (or a later position) is on disk. */
  store(next: bigint): Promise<void> {
    if (this.#wanted === undefined || next > this.#wanted) this.#wanted = next;
    this.#writing ??= this.#run();
    return this.#writing;
  }

  /** Waits for the writes under way. */
  async settle(): Promise<void> {
    while (this.#writing) await this.#writing;
    if (this.#failure) throw this.#failure;
  }

  async #run(): Promise<void> {
    // Let the acks of this turn join one write.
    await Promise.resolve();
    try {
      while (this.#wanted !== undefined && this.#wanted !== this.#stored) {
        const next = this.#wanted;
        const body: Stored = { version: 1, stream: this.#stream, next: next.toString() };
        const temp = `${this.path}.tmp`;
        await writeFile(temp, `${JSON.stringify(body)}\n`);
        await rename(temp, this.path);
        this.#stored = next;
      }
    } catch (error) {
      this.#failure = error;
      throw error;
    } finally {
      this.#writing = undefined;
    }
  }
}
