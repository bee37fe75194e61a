// What a stream file holds, read straight from its bytes with the package's own decoder: the
// sequence numbers of the load still in it (what a truncation left) and whether it reads clean to
// its end (what a full disk must not spoil).
import { readFileSync } from "node:fs";
import { decodeEnvelope, decodeFile, fileErrorDetail } from "@ruststream/file/format";

export interface FileContents {
  /** The load's sequence numbers on `key`, in file order, once each. */
  readonly seqs: ReadonlySet<number>;
  /** Empty when the file reads clean to its end (or to its end-of-stream marker); else what stops it. */
  readonly damage: string;
}

export function fileContents(path: string, key: string): FileContents {
  const { messages, outcome } = decodeFile(new Uint8Array(readFileSync(path)));
  const seqs = new Set<number>();
  for (const message of messages) {
    if (message.streamKey !== key) continue;
    const body = JSON.parse(new TextDecoder().decode(decodeEnvelope(message.payload).payload)) as {
      s?: unknown;
    };
    if (typeof body.s === "number") seqs.add(body.s);
  }
  const damage =
    outcome.status === "damaged"
      ? `${fileErrorDetail(outcome.error)?.code ?? "damage"} at byte ${fileErrorDetail(outcome.error)?.offset ?? "?"}: ${outcome.error.message}`
      : "";
  return { seqs, damage };
}
