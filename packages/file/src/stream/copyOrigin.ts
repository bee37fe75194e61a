import { COPY_OF_HEADER } from "../names.js";

/** The message a copy was written for: read by one named consumer at one sequence number. */
export interface CopyOrigin {
  readonly consumer: string;
  readonly streamKey: string;
  readonly seq: bigint;
}

/** A named consumer's delivery, as a copy written for it into the file `path` names it. */
export interface DeliveryOrigin extends CopyOrigin {
  readonly path: string;
}

/** The value of {@link COPY_OF_HEADER} for `origin`. */
export function formatCopyOrigin(origin: CopyOrigin): string {
  return `${origin.consumer} ${origin.streamKey} ${origin.seq}`;
}

/** Reads the header back; `undefined` for a value no writer of ours writes. */
export function parseCopyOrigin(value: string | undefined): CopyOrigin | undefined {
  if (value === undefined) return undefined;
  const parts = value.split(" ");
  if (parts.length !== 3) return undefined;
  const [consumer, streamKey, seq] = parts as [string, string, string];
  if (consumer === "" || streamKey === "" || !/^[0-9]+$/.test(seq)) return undefined;
  return { consumer, streamKey, seq: BigInt(seq) };
}
