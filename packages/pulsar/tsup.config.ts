import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", wire: "src/wire/index.ts" },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  external: ["@ruststream/core"],
});
