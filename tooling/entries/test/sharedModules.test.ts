// No source module is bundled into two entries of one package, in either build: what several
// entries need lives in a shared chunk, so a process loading both entries holds one copy of each
// module and its state (issue 20: the CommonJS builds of @ruststream/pulsar and its /wire entry
// each carried the codec module, and ZSTD was initialised twice). The metafile tsup writes beside
// each build (dist/metafile-esm.json, dist/metafile-cjs.json; never packed) names the sources each
// output holds.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { workspacePackages } from "./build.js";

interface Metafile {
  readonly outputs: Readonly<
    Record<string, { readonly inputs: Readonly<Record<string, unknown>> }>
  >;
}

const sourcesOf = (dir: string, format: "esm" | "cjs", output: string): readonly string[] => {
  const meta = JSON.parse(
    readFileSync(join(dir, "dist", `metafile-${format}.json`), "utf8"),
  ) as Metafile;
  const built = meta.outputs[output.replace(/^\.\//, "")];
  if (built === undefined)
    throw new Error(`${output} is not in ${dir}'s ${format} metafile: run pnpm build`);
  return Object.keys(built.inputs);
};

const withSeveralEntries = workspacePackages().filter((p) => p.subpaths.length > 1);

describe("entries share their modules", () => {
  it("every package with several entries is checked", () => {
    expect(withSeveralEntries.map((p) => p.name).sort()).toEqual(
      expect.arrayContaining(["@ruststream/core", "@ruststream/file", "@ruststream/pulsar"]),
    );
  });

  describe.each(withSeveralEntries.map((p) => [p.name, p] as const))("%s", (_, pkg) => {
    it.each([
      ["ESM", "esm", ".js", pkg.subpaths],
      ["CommonJS", "cjs", ".cjs", pkg.requireSubpaths],
    ] as const)("%s: no source file is in two entries", (_name, format, extension, subpaths) => {
      const outputs = pkg.outputs.filter((o) => o.endsWith(extension));
      expect(outputs.length).toBe(subpaths.length);
      const owners = new Map<string, string[]>();
      for (const output of outputs)
        for (const source of sourcesOf(pkg.dir, format, output))
          owners.set(source, [...(owners.get(source) ?? []), output]);
      const duplicated = [...owners]
        .filter(([, o]) => o.length > 1)
        .map(([s, o]) => `${s} in ${o.join(" and ")}`);
      expect(duplicated).toEqual([]);
    });
  });
});
