import { defineConfig } from "tsup";

export default defineConfig({
  entry: {
    index: "src/index.ts",
    format: "src/formatEntry.ts",
  },
  format: ["esm", "cjs"],
  dts: true,
  // No source maps: the package ships no sources for them to point at. The metafile names what
  // each output holds, for tooling/entries (never packed).
  metafile: true,
  clean: true,
  splitting: true,
  target: "node22",
});
