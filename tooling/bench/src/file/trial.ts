// What every .ss file row is given and answers, ours and the crate's alike.

/** One row's run: the file it reads (replay) or a fresh path it writes or follows, and how many. */
export interface FileTrial {
  /** The crate's release program (tooling/interop): the tail rows' writer, the crate's rows. */
  readonly rust: string;
  /** Replay: the file to read to its end. Tail and write: a path nobody used yet. */
  readonly path: string;
  readonly messages: number;
  /** The plain write: the crate's file whose frames it writes again, byte for byte. */
  readonly framesOf?: string;
}

export interface Run {
  readonly messages: number;
  readonly seconds: number;
}

/** 512-byte messages in every row. */
export const messageBytes = 512;
/** Sends per burst, ours and the crate's alike. */
export const burst = 256;
/** The stream key the crate's programs write and read. */
export const benchKey = "bench";
