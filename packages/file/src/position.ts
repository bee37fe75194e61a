import { type Position, RustStreamError } from "@ruststream/core";

export type FilePositionTarget =
  | { readonly kind: "beginning" }
  | { readonly kind: "end" }
  /** The message of the stream with this sequence number, or the first after it. */
  | { readonly kind: "sequence"; readonly seq: bigint }
  /** The first message strictly later than this time (ms since the epoch). */
  | { readonly kind: "timestamp"; readonly ms: number };

/**
 * A place in a stream of a `.ss` file, as RustStream's `FilePosition`: a delivery's position is its
 * sequence number (`"42"`); `"beginning"`, `"end"` and `"time:<ms>"` are the other texts.
 */
export class FilePosition implements Position {
  readonly broker = "file";
  readonly target: FilePositionTarget;

  private constructor(target: FilePositionTarget) {
    this.target = target;
  }

  static beginning(): FilePosition {
    return new FilePosition({ kind: "beginning" });
  }
  static end(): FilePosition {
    return new FilePosition({ kind: "end" });
  }
  static sequence(seq: bigint): FilePosition {
    return new FilePosition({ kind: "sequence", seq });
  }
  static timestamp(ms: number): FilePosition {
    return new FilePosition({ kind: "timestamp", ms });
  }

  toString(): string {
    const t = this.target;
    switch (t.kind) {
      case "sequence":
        return t.seq.toString();
      case "timestamp":
        return `time:${t.ms}`;
      default:
        return t.kind;
    }
  }

  static parse(text: string): FilePosition {
    if (text === "beginning") return FilePosition.beginning();
    if (text === "end") return FilePosition.end();
    if (/^(0|[1-9][0-9]{0,19})$/.test(text)) return FilePosition.sequence(BigInt(text));
    const time = /^time:(0|[1-9][0-9]{0,14})$/.exec(text);
    if (time) return FilePosition.timestamp(Number(time[1]));
    throw new RustStreamError(
      "invalid-argument",
      `"${text}" is not a file position: store one with position.toString() ("42", "beginning", "end" or "time:<ms>") and parse that`,
    );
  }
}

export function isFilePosition(value: unknown): value is FilePosition {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as Position).broker === "file" &&
    typeof (value as FilePosition).target === "object"
  );
}
