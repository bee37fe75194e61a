// The ZSTD codec over @bokuweb/zstd-wasm, initialised once per process.
//
// The library keeps one WebAssembly instance in module state, and its init() is not idempotent: a
// second call instantiates a fresh module and swaps in its memory, while every function already
// called stays bound to the first instance. After that, compress() writes through the old instance
// and reads the new, empty memory: frames of zero bytes, which the broker stores and nobody can
// read (issue 20). A process can hold several copies of this file (the CommonJS and the ES module
// build, each loaded by some dependency), all reaching the same copy of the library, so a flag in
// this file is not enough: the one initialisation is shared through a registry on globalThis,
// under a registered symbol, keyed by the library's own init function (one per copy of it).
//
// The library's decompress() allocates, inside its WebAssembly memory, the content size a frame's
// header declares (or `defaultHeapSize` when the header does not say), and WebAssembly memory never
// shrinks: a 12-byte frame declaring 1 GiB would keep the process 1 GiB larger for good. So the
// header is read here first, with the checks the library makes on it, and the frame is decompressed
// only when it declares exactly the size the entry's metadata does (itself within the max message
// size), or nothing, in which case that size is the one the library allocates.
import { RustStreamError } from "@ruststream/core";
import { DecodeError } from "./errors.js";

/** What this package uses of @bokuweb/zstd-wasm. */
interface ZstdLibrary {
  init(): Promise<void>;
  compress(data: Uint8Array, level?: number): Uint8Array;
  decompress(data: Uint8Array, options?: { defaultHeapSize: number }): Uint8Array;
}

export interface ZstdCodec {
  compress(data: Uint8Array): Uint8Array;
  /** Decompresses a frame declaring `uncompressedSize` bytes, or no size; DecodeError otherwise. */
  decompress(data: Uint8Array, uncompressedSize: number): Uint8Array;
}

const ZSTD_LEVEL = 3; // zstd-jni's default, which the Java client uses

// Every zstd frame starts with these four bytes (RFC 8878, 3.1.1).
const MAGIC = [0x28, 0xb5, 0x2f, 0xfd] as const;

const registryKey = Symbol.for("@ruststream/pulsar: zstd-wasm initialisations");

function registry(): WeakMap<object, Promise<void>> {
  const holder = globalThis as { [registryKey]?: WeakMap<object, Promise<void>> };
  holder[registryKey] ??= new WeakMap();
  return holder[registryKey];
}

function isFrame(data: Uint8Array): boolean {
  return MAGIC.every((byte, i) => data[i] === byte);
}

/** zstd's names for the errors corrupt or lying frames cause (its ZSTD_ErrorCode, by number). */
const ERROR_NAMES = new Map<number, string>([
  [20, "the data is corrupt"],
  [22, "the content checksum does not match"],
  [70, "the frame holds more than the size declared"],
  [72, "the frame is cut short"],
]);

/**
 * What the library's failure means: it throws `Failed to compress with code -<n>` (its own wording,
 * for decompressing too), n being zstd's error code.
 */
function decoderError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = /code -(\d+)/.exec(message)?.[1];
  const name = code === undefined ? undefined : ERROR_NAMES.get(Number(code));
  return code === undefined
    ? message
    : `${name ?? "the frame cannot be decoded"} (zstd error ${code})`;
}

/** The largest window the library's 32-bit build accepts (ZSTD_WINDOWLOG_MAX_32). */
const MAX_WINDOW_LOG = 30;

/**
 * The content size a zstd frame's header declares (RFC 8878, 3.1.1.1), undefined when it declares
 * none; DecodeError for a header the library would refuse, so that it never reads an error as a size.
 */
export function zstdDeclaredSize(frame: Uint8Array): number | undefined {
  if (frame.length < 5 || !isFrame(frame)) throw new DecodeError("zstd: not a zstd frame");
  const descriptor = frame[4]!;
  if (descriptor & 0x08) throw new DecodeError("zstd: the frame header sets its reserved bit");
  const singleSegment = (descriptor >> 5) & 1;
  const sizeFlag = descriptor >> 6;
  const sizeBytes = sizeFlag === 0 ? singleSegment : 1 << sizeFlag;
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
  let at = 5;
  if (!singleSegment) {
    const windowLog = 10 + (frame[at++]! >> 3);
    if (windowLog > MAX_WINDOW_LOG)
      throw new DecodeError(`zstd: the frame asks for a window of 2^${windowLog} bytes`);
  }
  at += dictionaryBytes;
  if (frame.length < at + sizeBytes) throw new DecodeError("zstd: the frame header is cut short");
  if (sizeBytes === 0) return undefined;
  let size = 0;
  for (let i = sizeBytes - 1; i >= 0; i--) size = size * 256 + frame[at + i]!;
  // Two bytes count from 256; eight may pass 2^53, rounded here, and no limit is near that.
  return sizeBytes === 2 ? size + 256 : size;
}

/**
 * Whether the library already runs (something else in the process initialised it): then its
 * functions work, and initialising it again would break them. Before any init they throw, since
 * the instance they call does not exist yet.
 */
function running(zstd: ZstdLibrary): boolean {
  try {
    return isFrame(zstd.compress(new Uint8Array(1), 1));
  } catch {
    return false;
  }
}

/** Initialises the library at most once per process, whoever asks. */
function initOnce(zstd: ZstdLibrary): Promise<void> {
  const inits = registry();
  let init = inits.get(zstd.init);
  if (init === undefined) {
    init = running(zstd) ? Promise.resolve() : zstd.init();
    inits.set(zstd.init, init);
  }
  return init;
}

const probe = new TextEncoder().encode("ruststream zstd probe ".repeat(8));

/** Loads and initialises ZSTD; rejects when the library cannot load or fails its round trip. */
export async function loadZstd(): Promise<ZstdCodec> {
  const zstd: ZstdLibrary = await import("@bokuweb/zstd-wasm");
  await initOnce(zstd);
  const frame = zstd.compress(probe, ZSTD_LEVEL);
  const back = zstd.decompress(frame);
  if (!isFrame(frame) || back.length !== probe.length || !back.every((b, i) => b === probe[i]))
    throw new Error("@bokuweb/zstd-wasm failed a round trip after initialising");
  return {
    compress(data) {
      const out = zstd.compress(data, ZSTD_LEVEL);
      // Four bytes compared per send, so a broken instance never stores what nobody can read.
      if (!isFrame(out))
        throw new RustStreamError(
          "publish-refused",
          "ZSTD produced no zstd frame (its WebAssembly instance was initialised again after use, by something other than this package calling @bokuweb/zstd-wasm's init()); nothing was sent: restart the process, or publish with another compression",
        );
      return out;
    },
    decompress(data, uncompressedSize) {
      const declared = zstdDeclaredSize(data);
      if (declared !== undefined && declared !== uncompressedSize)
        throw new DecodeError(
          `zstd: the frame declares ${declared} bytes where the metadata declares ${uncompressedSize}`,
        );
      try {
        return zstd.decompress(data, { defaultHeapSize: uncompressedSize });
      } catch (error) {
        throw new DecodeError(`zstd: ${decoderError(error)}`, { cause: error });
      }
    },
  };
}
