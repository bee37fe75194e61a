import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts", wire: "src/wire/index.ts" },
  format: ["esm", "cjs"],
  dts: true,
  // No source maps: the package ships no sources for them to point at. The metafile names what
  // each output holds, for tooling/entries (never packed).
  metafile: true,
  clean: true,
  // The CommonJS build shares chunks between its entries too, as the ES module build does: without
  // it, dist/index.cjs and dist/wire.cjs each carried the wire client, so a process requiring both
  // held two copies of every module and its state (two codec modules initialised ZSTD twice and
  // published frames nobody could read: issue 20).
  splitting: true,
  target: "node22",
  external: ["@ruststream/core"],
});
