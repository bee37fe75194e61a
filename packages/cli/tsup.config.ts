import { defineConfig } from "tsup";

export default defineConfig([
  {
    // The library entry, for a program that loads apps or logs as the CLI does.
    entry: { index: "src/index.ts" },
    format: ["esm", "cjs"],
    dts: true,
    sourcemap: true,
    clean: true,
    splitting: true,
    // import.meta.url (the CLI's own package.json for --version) in the CommonJS build too.
    shims: true,
    target: "node22",
  },
  {
    // The `ruststream` executable: ES module only, its shebang kept.
    entry: { bin: "src/bin.ts" },
    format: ["esm"],
    sourcemap: true,
    splitting: true,
    target: "node22",
  },
]);
