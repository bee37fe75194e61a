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
  target: "node20",
});
