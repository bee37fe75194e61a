import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    broker: "src/brokerEntry.ts",
    msgpack: "src/codec/msgpack.ts",
    cbor: "src/codec/cbor.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  // No source maps: the package ships no sources for them to point at. The metafile names what
  // each output holds, for tooling/entries (never packed).
  metafile: true,
  clean: true,
  // The CJS entries too share their chunks, so a process that requires both entries holds one copy
  // of each class and module state (the ESM build splits by default).
  splitting: true,
  target: "node22",
});
