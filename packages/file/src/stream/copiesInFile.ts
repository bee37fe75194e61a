import { closeSync, openSync } from "node:fs";
import { COPY_OF_HEADER } from "../names.js";
import { decodeEnvelope } from "../wire/envelope.js";
import { HEADER_SIZE } from "../wire/format/constants.js";
import { decodeHeader } from "../wire/format/header.js";
import { locateStart } from "../wire/format/locate.js";
import { FileConsumer } from "../wire/io/consumer.js";
import { fileReader } from "../wire/io/fileReader.js";
import { parseCopyOrigin } from "./copyOrigin.js";

const RS_PREFIX = [0x72, 0x73]; // "rs": every envelope starts "rs1:" or "rs2:"

/**
 * The sequence numbers, from `fromSeq` on, of the messages of `streamKey` whose retry copy or dead
 * letter `consumer` already wrote into the file (any stream key). The runtime writes such a copy,
 * then acks the original; a crash between the two, or before the stored position moved past the
 * original, would deliver the original again and write a second copy (a second dead letter). A copy
 * always lands after its original, so reading from the original on finds it.
 *
 * Reads the file once, from about `fromSeq`'s frame to its current end: what a restart costs.
 * A frame cut short at the end (a crash mid-write) is no copy: it is cut off by the next writer.
 */
export async function copiesInFile(
  file: { readonly path: string; readonly maxMessageBytes: number },
  consumer: string,
  streamKey: string,
  fromSeq: bigint,
): Promise<Set<bigint>> {
  const { path, maxMessageBytes } = file;
  const copied = new Set<bigint>();
  const fd = openSync(path, "r");
  let offset: number;
  try {
    const reader = fileReader(fd);
    const header = decodeHeader(reader.read(0, HEADER_SIZE));
    offset = locateStart(reader, header, streamKey, { seq: fromSeq });
  } finally {
    closeSync(fd);
  }
  const reading = await FileConsumer.open(path, {
    from: { offset: Math.max(offset, HEADER_SIZE) },
    maxMessageBytes,
  });
  try {
    for (;;) {
      const message = await reading.next();
      if (message === undefined) break;
      const payload = message.payload;
      if (payload[0] !== RS_PREFIX[0] || payload[1] !== RS_PREFIX[1]) continue;
      const origin = parseCopyOrigin(decodeEnvelope(payload).headers.getString(COPY_OF_HEADER));
      if (
        origin?.consumer === consumer &&
        origin.streamKey === streamKey &&
        origin.seq >= fromSeq
      ) {
        copied.add(origin.seq);
      }
    }
  } catch {
    // Damage: the copies before it are known; the subscription meets the damage itself.
  } finally {
    reading.close();
  }
  return copied;
}
