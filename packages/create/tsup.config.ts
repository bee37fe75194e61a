import { defineConfig } from "tsup";

// One build for both entries, so the command and the library share their chunks. (Its CommonJS
// twin, dist/bin.cjs, is a by-product: package.json's bin names the ES module.)
export default defineConfig({
  entry: { index: "src/index.ts", bin: "src/bin.ts" },
  format: ["esm", "cjs"],
  dts: { entry: { index: "src/index.ts" } },
  sourcemap: true,
  clean: true,
  splitting: true,
  // import.meta.url (this package's own package.json and templates) in the CommonJS build too.
  shims: true,
  target: "node22",
});
