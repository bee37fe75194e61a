import { promisify } from "node:util";
import { gzip, unzip } from "node:zlib";

// kafkajs inflates a gzip batch with Node's zlib and no output cap, so one small batch (gzip reaches
// about 1000:1) could take the process's memory before any record of it is read; the process then
// dies, starts again on the same batch, and dies again. This codec replaces kafkajs's own in its
// codec registry: it inflates up to a cap and, past it (or on bytes that are no gzip), answers
// records in the batch's place instead of throwing, one per record the batch declares, each empty
// and carrying `refusedBatchHeader` with the reason. A throw would fail the whole fetch, and kafkajs
// would fetch the same batch again for ever; records let the subscription hand each on as
// undecodable (logged with its partition and offset, dead-lettered where a dead letter is declared)
// and commit past the batch.

/** The header each record standing for a refused batch carries: why the batch was refused. */
export const refusedBatchHeader = "x-ruststream-kafkajs-refused-batch";

/**
 * A batch inflated past this is refused: far above what producers put in one batch (librdkafka and
 * the Java client close a batch at about 1 MB and 16 KiB of records by default).
 */
export const MAX_INFLATED_BATCH_BYTES = 64 * 1024 * 1024;

/**
 * The most records a refused batch is stood in for. kafkajs makes an object of every record a batch
 * declares, so a batch declaring millions is beyond saving either way: past this, the fetch fails.
 */
const MAX_STAND_INS = 100_000;

/** What kafkajs's codec registry holds: compress for producing, decompress for fetching. */
export interface KjsCodec {
  compress(encoder: { readonly buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

const gzipAsync = promisify(gzip);
const unzipAsync = promisify(unzip);

/** The gzip codec, inflating at most `cap` bytes a batch. */
export function boundedGzipCodec(cap: number = MAX_INFLATED_BATCH_BYTES): KjsCodec {
  return {
    compress: (encoder) => gzipAsync(encoder.buffer),
    async decompress(buffer) {
      try {
        return await unzipAsync(buffer, { maxOutputLength: cap });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        const reason =
          code === "ERR_BUFFER_TOO_LARGE"
            ? `its gzip inflates past ${cap} bytes`
            : `its gzip cannot be inflated (${(error as Error).message})`;
        return standInRecords(buffer, reason);
      }
    },
  };
}

// A v2 record batch's header, counted back from where its records start (kafkajs hands the codec a
// view of the fetch response, beginning right after the record count): the count (int32) at -4, the
// last offset delta (int32) at -38, the attributes (int16) at -40, the magic byte at -45.
const COUNT_AT = 4;
const LAST_OFFSET_DELTA_AT = 38;
const ATTRIBUTES_AT = 40;
const MAGIC_AT = 45;
const GZIP_ATTRIBUTE = 1;

/**
 * One empty record per record the batch declares, at the offsets it declares (its last one at the
 * batch's last offset, so the position committed after them is past the whole batch), each carrying
 * the reason. Throws (failing the fetch, as kafkajs's own codec would) when the bytes before
 * `compressed` are not the batch header they must be: a kafkajs that hands the codec a copy.
 */
function standInRecords(compressed: Buffer, reason: string): Buffer {
  const header = batchHeader(compressed);
  if (header === undefined) {
    throw new Error(
      `a gzip batch was refused (${reason}), and no records can stand in its place: it declares more than ${MAX_STAND_INS} records, or this kafkajs is not the version the package reads (2.2.4)`,
    );
  }
  const name = Buffer.from(refusedBatchHeader);
  const value = Buffer.from(
    `a gzip record batch of ${header.count} records was refused: ${reason}`,
  );
  const records: Buffer[] = [];
  for (let i = 0; i < header.count; i++) {
    const delta = i === header.count - 1 ? header.lastOffsetDelta : i;
    const body = Buffer.concat([
      Buffer.of(0), // attributes
      varint(0), // timestamp delta
      varint(delta),
      varint(-1), // no key
      varint(0), // an empty value
      varint(1), // one header
      varint(name.length),
      name,
      varint(value.length),
      value,
    ]);
    records.push(varint(body.length), body);
  }
  return Buffer.concat(records);
}

function batchHeader(
  compressed: Buffer,
): { readonly count: number; readonly lastOffsetDelta: number } | undefined {
  if (compressed.byteOffset < MAGIC_AT) return undefined;
  const view = new DataView(compressed.buffer, compressed.byteOffset - MAGIC_AT, MAGIC_AT);
  const magic = view.getInt8(0);
  const attributes = view.getInt16(MAGIC_AT - ATTRIBUTES_AT);
  const lastOffsetDelta = view.getInt32(MAGIC_AT - LAST_OFFSET_DELTA_AT);
  const count = view.getInt32(MAGIC_AT - COUNT_AT);
  if (magic !== 2 || (attributes & 0x07) !== GZIP_ATTRIBUTE) return undefined;
  // A batch's offsets span at least its records; a count past that is not a header read right.
  if (count < 1 || count > MAX_STAND_INS || lastOffsetDelta < count - 1) return undefined;
  return { count, lastOffsetDelta };
}

/** Kafka's zigzag varint (32-bit). */
function varint(n: number): Buffer {
  let zigzag = ((n << 1) ^ (n >> 31)) >>> 0;
  const bytes: number[] = [];
  while (zigzag > 0x7f) {
    bytes.push((zigzag & 0x7f) | 0x80);
    zigzag >>>= 7;
  }
  bytes.push(zigzag);
  return Buffer.from(bytes);
}
