// The payload codecs, matching what Pulsar's Java client writes byte for byte: LZ4 as a raw block,
// ZLIB as a zlib stream (java.util.zip.Deflater's default), ZSTD as a zstd frame, SNAPPY as a raw
// snappy block. A batch is compressed whole. LZ4 is this package's own (lz4.ts), ZLIB is node:zlib;
// ZSTD (WebAssembly, zstd.ts) and SNAPPY (a Node-API addon with prebuilt binaries, snappy.ts) are
// loaded on first need by `loadCodecs`, so a platform without one of them still runs every other
// codec.
//
// Decompressing reads bytes someone else wrote, so it is bounded: the size the entry's metadata
// declares is checked against the max message size first, and no codec produces, or allocates for,
// more than that size, whatever its input claims.
import { constants, deflateSync, inflateSync } from "node:zlib";
import { RustStreamError } from "@ruststream/core";
import { CompressionType, type CompressionTypeValue, compressionName } from "./commands/enums.js";
import { DecodeError } from "./errors.js";
import { DEFAULT_MAX_MESSAGE_SIZE } from "./frame.js";
import { lz4CompressBlock, lz4DecompressBlock } from "./lz4.js";
import { loadSnappy } from "./snappy.js";
import { loadZstd } from "./zstd.js";

/** A compression type by the name the Java client gives it. */
export type Compression = "NONE" | "LZ4" | "ZLIB" | "ZSTD" | "SNAPPY";

interface Codec {
  compress(data: Uint8Array): Uint8Array;
  /** Exactly `uncompressedSize` bytes, never producing or allocating more; throws otherwise. */
  decompress(data: Uint8Array, uncompressedSize: number): Uint8Array;
}

/**
 * Inflates at most `uncompressedSize` bytes: zlib stops, and throws, as soon as its output passes
 * that, instead of inflating a small bomb to gigabytes before the size is compared.
 */
function inflateAtMost(data: Uint8Array, uncompressedSize: number): Uint8Array {
  try {
    // The Java codec ends its stream with a sync flush, not a final block: inflate what is there
    // instead of insisting on the stream's end.
    return inflateSync(data, {
      finishFlush: constants.Z_SYNC_FLUSH,
      maxOutputLength: Math.max(1, uncompressedSize),
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE")
      throw new DecodeError(
        `zlib: the stream inflates past the ${uncompressedSize} bytes the metadata declares`,
      );
    throw error;
  }
}

const codecs = new Map<number, Codec>([
  [CompressionType.NONE, { compress: (data) => data, decompress: (data) => data }],
  [CompressionType.LZ4, { compress: lz4CompressBlock, decompress: lz4DecompressBlock }],
  [CompressionType.ZLIB, { compress: (data) => deflateSync(data), decompress: inflateAtMost }],
]);

const loadErrors = new Map<number, unknown>();
let loading: Promise<void> | undefined;

/**
 * Loads the ZSTD and SNAPPY codecs once; what fails to load is reported when it is first needed.
 * Safe to call any number of times, from any copy of this module: ZSTD's initialisation is one
 * per process (zstd.ts).
 */
export function loadCodecs(): Promise<void> {
  loading ??= (async () => {
    try {
      codecs.set(CompressionType.ZSTD, await loadZstd());
    } catch (error) {
      loadErrors.set(CompressionType.ZSTD, error);
    }
    try {
      codecs.set(CompressionType.SNAPPY, await loadSnappy());
    } catch (error) {
      loadErrors.set(CompressionType.SNAPPY, error);
    }
  })();
  return loading;
}

/** The wire value of a compression name. */
export function compressionType(name: Compression): CompressionTypeValue {
  const value = CompressionType[name];
  if (value === undefined)
    throw new RustStreamError(
      "invalid-argument",
      `unknown compression ${JSON.stringify(name)}; use NONE, LZ4, ZLIB, ZSTD or SNAPPY`,
    );
  return value;
}

/** What to do when a lazily loaded codec is missing: it names the package that failed. */
const loadFixes = new Map<number, string>([
  [
    CompressionType.SNAPPY,
    "SNAPPY needs snappy's prebuilt binary for this platform (an @napi-rs/snappy-* optional dependency): reinstall without --omit=optional, or install @napi-rs/snappy-wasm32-wasi where no binary exists, or publish with LZ4, ZLIB or ZSTD",
  ],
  [CompressionType.ZSTD, "ZSTD needs @bokuweb/zstd-wasm: reinstall the dependencies"],
]);

function codec(type: number): Codec {
  const found = codecs.get(type);
  if (found) return found;
  const cause = loadErrors.get(type);
  throw new RustStreamError(
    "unsupported",
    cause === undefined
      ? `compression type ${type} is unknown to this client (or loadCodecs() has not run)`
      : `compression type ${type}: its codec failed to load (${String(cause)}); ${loadFixes.get(type) ?? "reinstall the dependencies"}`,
    { cause },
  );
}

/** Compresses a payload (or a whole batch) with the codec `type` names. */
export function compress(type: number, data: Uint8Array): Uint8Array {
  return codec(type).compress(data);
}

/**
 * Checks the uncompressed size an entry's metadata declares: a whole number of bytes no larger than
 * `maxSize` (the broker's max message size, what no message may exceed). DecodeError otherwise.
 */
export function checkUncompressedSize(uncompressedSize: number, maxSize: number): void {
  if (!Number.isSafeInteger(uncompressedSize) || uncompressedSize < 0)
    throw new DecodeError(`an uncompressed size of ${uncompressedSize} bytes`);
  if (uncompressedSize > maxSize)
    throw new DecodeError(
      `an uncompressed size of ${uncompressedSize} bytes, above the max message size of ${maxSize}`,
    );
}

/**
 * Decompresses a payload to exactly `uncompressedSize` bytes, which may not exceed `maxSize` (the
 * broker's max message size; its default when not given). Bytes that cannot be decompressed so, a
 * size above the limit or a compression type this client does not know throw DecodeError, before
 * more than that size is produced or allocated; a codec that failed to load throws `unsupported`.
 */
export function decompress(
  type: number,
  data: Uint8Array,
  uncompressedSize: number,
  maxSize: number = DEFAULT_MAX_MESSAGE_SIZE,
): Uint8Array {
  checkUncompressedSize(uncompressedSize, maxSize);
  const name = compressionName(type);
  if (name === undefined)
    throw new DecodeError(`compression type ${type} is unknown to this client`);
  const decoder = codec(type);
  let out: Uint8Array;
  try {
    out = decoder.decompress(data, uncompressedSize);
  } catch (error) {
    if (error instanceof DecodeError) throw error;
    // What the codec itself says of bytes it cannot read (zlib's "incorrect header check", zstd's code).
    throw new DecodeError(`${name}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  if (out.length !== uncompressedSize)
    throw new DecodeError(
      `${name}: decompressed ${out.length} bytes where the metadata declares ${uncompressedSize}`,
    );
  return out;
}
