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
import { RustStreamError } from "@ruststream/core";

/** What this package uses of @bokuweb/zstd-wasm. */
interface ZstdLibrary {
  init(): Promise<void>;
  compress(data: Uint8Array, level?: number): Uint8Array;
  decompress(data: Uint8Array): Uint8Array;
}

export interface ZstdCodec {
  compress(data: Uint8Array): Uint8Array;
  decompress(data: Uint8Array): Uint8Array;
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
    decompress: (data) => zstd.decompress(data),
  };
}
