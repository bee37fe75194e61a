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
  sourcemap: true,
  clean: true,
  // The CJS entries too share their chunks, so a process that requires both entries holds one copy
  // of each class and module state (the ESM build splits by default).
  splitting: true,
  target: "node22",
});
