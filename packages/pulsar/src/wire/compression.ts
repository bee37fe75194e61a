// The payload codecs, matching what Pulsar's Java client writes byte for byte: LZ4 as a raw block,
// ZLIB as a zlib stream (java.util.zip.Deflater's default), ZSTD as a zstd frame, SNAPPY as a raw
// snappy block. A batch is compressed whole. LZ4 is this package's own (lz4.ts), ZLIB is node:zlib;
// ZSTD (WebAssembly, zstd.ts) and SNAPPY (a Node-API addon with prebuilt binaries) are loaded on
// first need by `loadCodecs`, so a platform without one of them still runs every other codec.
import { constants, deflateSync, inflateSync } from "node:zlib";
import { RustStreamError } from "@ruststream/core";
import { CompressionType, type CompressionTypeValue } from "./commands/enums.js";
import { lz4CompressBlock, lz4DecompressBlock } from "./lz4.js";
import { loadZstd } from "./zstd.js";

/** A compression type by the name the Java client gives it. */
export type Compression = "NONE" | "LZ4" | "ZLIB" | "ZSTD" | "SNAPPY";

interface Codec {
  compress(data: Uint8Array): Uint8Array;
  decompress(data: Uint8Array, uncompressedSize: number): Uint8Array;
}

const codecs = new Map<number, Codec>([
  [CompressionType.NONE, { compress: (data) => data, decompress: (data) => data }],
  [CompressionType.LZ4, { compress: lz4CompressBlock, decompress: lz4DecompressBlock }],
  [
    CompressionType.ZLIB,
    {
      compress: (data) => deflateSync(data),
      // The Java codec ends its stream with a sync flush, not a final block: inflate what is there
      // instead of insisting on the stream's end.
      decompress: (data) => inflateSync(data, { finishFlush: constants.Z_SYNC_FLUSH }),
    },
  ],
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
      const snappy = (await import("snappy")).default;
      codecs.set(CompressionType.SNAPPY, {
        compress: (data) =>
          snappy.compressSync(Buffer.from(data.buffer, data.byteOffset, data.length)),
        decompress: (data) =>
          snappy.uncompressSync(Buffer.from(data.buffer, data.byteOffset, data.length)) as Buffer,
      });
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

/** Decompresses a payload; the result must be exactly `uncompressedSize` bytes. */
export function decompress(type: number, data: Uint8Array, uncompressedSize: number): Uint8Array {
  const out = codec(type).decompress(data, uncompressedSize);
  if (out.length !== uncompressedSize)
    throw new Error(
      `decompressed ${out.length} bytes where the metadata declared ${uncompressedSize}`,
    );
  return out;
}
