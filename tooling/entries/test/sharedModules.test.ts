// No source module is bundled into two entries of one package, in either build: what several
// entries need lives in a shared chunk, so a process loading both entries holds one copy of each
// module and its state (issue 20: the CommonJS builds of @ruststream/pulsar and its /wire entry
// each carried the codec module, and ZSTD was initialised twice). The source maps tsup writes name
// the sources each output holds.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workspacePackages } from "./build.js";

interface SourceMap {
  readonly sources: readonly string[];
}

const sourcesOf = (dir: string, output: string): readonly string[] =>
  (JSON.parse(readFileSync(join(dir, `${output}.map`), "utf8")) as SourceMap).sources;

const withSeveralEntries = workspacePackages().filter((p) => p.subpaths.length > 1);

describe("entries share their modules", () => {
  it("every package with several entries is checked", () => {
    expect(withSeveralEntries.map((p) => p.name).sort()).toEqual(
      expect.arrayContaining(["@ruststream/core", "@ruststream/file", "@ruststream/pulsar"]),
    );
  });

  describe.each(withSeveralEntries.map((p) => [p.name, p] as const))("%s", (_, pkg) => {
    it.each([
      ["ESM", ".js"],
      ["CommonJS", ".cjs"],
    ])("%s: no source file is in two entries", (_format, extension) => {
      const outputs = pkg.outputs.filter((o) => o.endsWith(extension));
      expect(outputs.length).toBe(pkg.subpaths.length);
      const owners = new Map<string, string[]>();
      for (const output of outputs)
        for (const source of sourcesOf(pkg.dir, output))
          owners.set(source, [...(owners.get(source) ?? []), output]);
      const duplicated = [...owners]
        .filter(([, o]) => o.length > 1)
        .map(([s, o]) => `${s} in ${o.join(" and ")}`);
      expect(duplicated).toEqual([]);
    });
  });
});
