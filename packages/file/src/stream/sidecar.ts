import { readFileSync } from "node:fs";
import { rename, writeFile } from "node:fs/promises";
import type { StoredPosition } from "./consumerPosition.js";

/** Where a named consumer keeps its position: beside the stream file, one small file per stream. */
export function sidecarPath(streamPath: string, consumer: string, streamKey: string): string {
  // Consumer names have no dot, so the name and the key never run into each other.
  return `${streamPath}.${consumer}.${streamKey}.pos`;
}

/**
 * Version 1: `next` only. Version 2 adds `open`, the unsettled messages before `next`; it is written
 * only when there are some, so a position with none stays readable by a version that knows only 1,
 * and one with some is refused by it rather than read as if they were settled.
 */
interface Stored {
  readonly version: 1 | 2;
  readonly stream: string;
  /** The sequence number to resume at: one past the last message settled. */
  readonly next: string;
  /** Version 2: unsettled messages before `next`, ascending, delivered again first. */
  readonly open?: readonly string[];
}

const DIGITS = /^[0-9]+$/;

function parse(text: string): StoredPosition | undefined {
  const stored = JSON.parse(text) as Partial<Stored>;
  if (typeof stored.next !== "string" || !DIGITS.test(stored.next)) return undefined;
  if (stored.version === 1) return { next: BigInt(stored.next), open: [] };
  if (stored.version !== 2 || !Array.isArray(stored.open)) return undefined;
  const open: bigint[] = [];
  for (const seq of stored.open as unknown[]) {
    if (typeof seq !== "string" || !DIGITS.test(seq)) return undefined;
    open.push(BigInt(seq));
  }
  return { next: BigInt(stored.next), open };
}

/**
 * A consumer's stored position. Each store writes a temporary file and renames it over the old
 * one, so a crash leaves the old position or the new one, never half of either. Stores coalesce:
 * while one write runs, later stores wait and the position as it is then is written next.
 */
export class Sidecar {
  readonly path: string;
  readonly #stream: string;
  #read: () => StoredPosition = () => ({ next: 0n, open: [] });
  /** Stores asked for, and the count of them the last completed write covers. */
  #asked = 0;
  #done = 0;
  #written: string | undefined;
  #writing: Promise<void> | undefined;
  #failure: unknown;

  constructor(path: string, stream: string) {
    this.path = path;
    this.#stream = stream;
  }

  /** The stored position, or undefined when this consumer never stored one. */
  load(): StoredPosition | undefined {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const stored = parse(text);
    if (stored === undefined) {
      throw new Error(
        `${this.path} is not a RustStream consumer position: delete it to start the consumer afresh`,
      );
    }
    this.#written = text;
    return stored;
  }

  /**
   * Resolves once the position `read` answers, as it is when the write starts (so it covers every
   * settle before this call), is on disk.
   */
  store(read: () => StoredPosition): Promise<void> {
    this.#read = read;
    this.#asked++;
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
      while (this.#done < this.#asked) {
        const asked = this.#asked;
        const text = this.#encode(this.#read());
        if (text !== this.#written) {
          const temp = `${this.path}.tmp`;
          await writeFile(temp, text);
          await rename(temp, this.path);
          this.#written = text;
        }
        this.#done = asked;
      }
    } catch (error) {
      this.#failure = error;
      throw error;
    } finally {
      this.#writing = undefined;
    }
  }

  #encode(position: StoredPosition): string {
    const body: Stored =
      position.open.length === 0
        ? { version: 1, stream: this.#stream, next: position.next.toString() }
        : {
            version: 2,
            stream: this.#stream,
            next: position.next.toString(),
            open: position.open.map(String),
          };
    return `${JSON.stringify(body)}\n`;
  }
}
