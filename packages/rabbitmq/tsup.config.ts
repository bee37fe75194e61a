import { defineConfig } from "tsup";

export default defineConfig({
  entry: { index: "src/index.ts" },
  format: ["esm", "cjs"],
  dts: true,
  // No source maps: the package ships no sources for them to point at. The metafile names what
  // each output holds, for tooling/entries (never packed).
  metafile: true,
  clean: true,
  target: "node22",
  // The peers: an app brings its own core and amqplib.
  external: ["@ruststream/core", "amqplib"],
});
