import { defineConfig } from "tsup";

// One build for both entries, so the `ruststream` executable and the library share their chunks.
// (Its CommonJS twin, dist/bin.cjs, is a by-product: package.json's bin names the ES module.)
export default defineConfig({
  entry: { index: "src/index.ts", bin: "src/bin.ts" },
  format: ["esm", "cjs"],
  dts: { entry: { index: "src/index.ts" } },
  clean: true,
  splitting: true,
  // import.meta.url (the CLI's own package.json for --version) in the CommonJS build too.
  shims: true,
  target: "node22",
});
