import { defineConfig } from "tsup";

// One build of both entries, so one metafile names what each output holds (tooling/entries reads
// it; never packed). The conformance suites import vitest, which cannot be required: their CommonJS
// output is built but neither exported nor packed (package.json's exports and files). No source
// maps: the package ships no sources for them to point at.
export default defineConfig({
  entry: { index: "src/index.ts", conformance: "src/conformanceEntry.ts" },
  format: ["esm", "cjs"],
  dts: true,
  metafile: true,
  clean: true,
  target: "node22",
});
