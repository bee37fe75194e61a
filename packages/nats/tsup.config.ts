import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: true,
  // The metafile names what each output holds, for tooling/entries (never packed).
  metafile: true,
  clean: true,
  target: "node22",
  // The clients are peers: a service installs them beside this package, never a copy inside it.
  external: [
    "@ruststream/core",
    "@nats-io/transport-node",
    "@nats-io/jetstream",
    "@nats-io/kv",
    "@nats-io/obj",
  ],
});
