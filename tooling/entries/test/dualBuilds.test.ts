// Both builds of one entry in one process (a dependency that require()s @ruststream/pulsar/wire
// beside one that imports it): two copies of the codec module over one copy of zstd-wasm, which
// must be initialised once for the process, not once per copy (issue 20). Plain node, from dist.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";

it("ZSTD keeps writing readable frames when the CommonJS and ES module builds of the wire entry both load their codecs", () => {
  const out = execFileSync(
    process.execPath,
    [join(import.meta.dirname, "fixtures", "dualZstd.cjs")],
    {
      encoding: "utf8",
      timeout: 30_000,
    },
  );
  const ok = { magic: true, roundTrip: true };
  expect(JSON.parse(out)).toEqual({ early: ok, required: ok, imported: ok });
});
