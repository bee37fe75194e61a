import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: true,
  clean: true,
  target: "node22",
  // The two clients are optional peers, loaded when a broker connects: never bundled.
  external: ["@ruststream/core", "@confluentinc/kafka-javascript", "kafkajs"],
});
