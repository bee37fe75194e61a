// Every entry of every package, from its build, loaded through require() in one process and through
// import in another, and messages between the two on the real brokers: each Pulsar codec through
// the broker's publisher and the wire producer, Kafka through both engines, the file broker. Each
// side publishes, then reads what the other side published. Issue 20: a CommonJS process that
// required both Pulsar entries held two copies of the codec module, initialised ZSTD twice, and
// published entries nobody could read (and could read none itself); under import all was well.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uniqueName } from "@ruststream/tooling-testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type WorkspacePackage, workspacePackages } from "./build.js";
import { createSubscription, peek } from "./pulsarAdmin.js";
import { Side, type SideKind } from "./sides.js";

const CODECS = ["NONE", "LZ4", "ZLIB", "ZSTD", "SNAPPY"] as const;
const ENGINES = ["kafkajs", "librdkafka"] as const;
const READERS = ["broker-reader", "wire-reader"] as const;

interface ReadReport {
  readonly expected: number;
  readonly received: number;
  readonly missing: string[];
  readonly unexpected: string[];
  readonly discarded?: number;
}

const specifier = (p: WorkspacePackage, s: string): string =>
  s === "." ? p.name : `${p.name}/${s.slice(2)}`;

const packages = workspacePackages();
const ownManifest = JSON.parse(
  readFileSync(new URL("../package.json", import.meta.url), "utf8"),
) as { devDependencies: Record<string, string> };
const importEntries = packages.flatMap((p) => p.subpaths.map((s) => specifier(p, s)));
// The require() process loads every entry with a `require` condition: all but
// @ruststream/testing/conformance, which imports vitest (ES modules only) and so is ES module only.
const requireEntries = packages.flatMap((p) => p.requireSubpaths.map((s) => specifier(p, s)));

const run = uniqueName("entries");
const fileDir = mkdtempSync(join(tmpdir(), "rs-entries-"));
const plan = {
  run,
  count: 20,
  pulsarCodecs: [...CODECS],
  kafkaEngines: [...ENGINES],
  fileDir,
  idleMs: 5000,
};
const topic = (origin: SideKind, codec: string): string =>
  `${run}-${origin}-${codec.toLowerCase()}`;
const other = (origin: SideKind): SideKind => (origin === "require" ? "import" : "require");

// What a reader's report must be: everything the other side sent, once, nothing else.
const whole = (report: ReadReport | undefined) => ({
  received: report?.received,
  missing: report?.missing.slice(0, 6),
  unexpected: report?.unexpected.slice(0, 3),
  discarded: report?.discarded ?? 0,
});
const complete = (expected: number) => ({
  received: expected,
  missing: [],
  unexpected: [],
  discarded: 0,
});

const sides: Side[] = [];
const loaded: Partial<Record<SideKind, Record<string, string[]>>> = {};
const consumed: Partial<Record<SideKind, Record<string, ReadReport>>> = {};
const peeks: Record<string, { status: number; text: string }> = {};

beforeAll(async () => {
  // The sides resolve packages from this folder: a package missing from its devDependencies would
  // fail them with a bare ERR_MODULE_NOT_FOUND, so it is named here first.
  const listed = Object.keys(ownManifest.devDependencies);
  const unlisted = packages.map((p) => p.name).filter((name) => !listed.includes(name));
  if (unlisted.length > 0)
    throw new Error(
      `tooling/entries/package.json lacks ${unlisted.join(", ")} in its devDependencies ("workspace:*"): add them and run pnpm install`,
    );
  // Every subscription exists before anything is published, so nothing is lost before a reader.
  for (const origin of ["require", "import"] as const)
    for (const codec of CODECS)
      for (const reader of READERS) await createSubscription(topic(origin, codec), reader);
  const [required, imported] = await Promise.all([
    Side.start("require", requireEntries),
    Side.start("import", importEntries),
  ]);
  sides.push(required, imported);
  for (const side of sides) loaded[side.kind] = await side.ask("load", plan);
  await Promise.all(sides.map((side) => side.ask("publish", plan)));
  // The broker's own reading, before anyone consumes: the first entry of the broker's publisher
  // and the first of the wire producer (its batches come after the broker's single entries).
  for (const origin of ["require", "import"] as const)
    for (const codec of CODECS)
      for (const position of [1, plan.count + 1])
        peeks[`${origin} ${codec} ${position}`] = await peek(
          topic(origin, codec),
          "broker-reader",
          position,
        );
  const reports = await Promise.all(
    sides.map((side) => side.ask<Record<string, ReadReport>>("consume", plan)),
  );
  sides.forEach((side, i) => {
    const report = reports[i];
    if (report !== undefined) consumed[side.kind] = report;
  });
}, 300_000);

afterAll(() => {
  for (const side of sides) side.stop();
  rmSync(fileDir, { recursive: true, force: true });
});

describe("every entry of every package, from dist", () => {
  it("loads through require() in one process (ES module only entries aside) and through import in another, with the same exports", () => {
    expect(Object.keys(loaded.require ?? {})).toEqual(requireEntries);
    expect(Object.keys(loaded.import ?? {})).toEqual(importEntries);
    for (const spec of requireEntries) {
      expect(loaded.require?.[spec]?.length, `${spec} exports nothing`).toBeGreaterThan(0);
      // default and module.exports are how CommonJS looks from import; the names are the API.
      const names = (side: SideKind) =>
        loaded[side]?.[spec]?.filter((n) => n !== "default" && n !== "module.exports");
      expect(names("require"), spec).toEqual(names("import"));
    }
  });
});

describe.each(["require", "import"] as const)("published under %s()", (origin) => {
  const reader = other(origin);

  it.each(CODECS)(`Pulsar %s: read back under ${reader} by both entries' consumers`, (codec) => {
    const each = <T>(value: (name: string) => T) =>
      Object.fromEntries(READERS.map((name) => [name, value(name)]));
    expect(each((name) => whole(consumed[reader]?.[`pulsar ${codec} ${name}`]))).toEqual(
      each(() => complete(2 * plan.count)),
    );
  });

  it.each(CODECS)("Pulsar %s: the broker itself reads the entries (admin peek)", (codec) => {
    for (const position of [1, plan.count + 1])
      expect(peeks[`${origin} ${codec} ${position}`], `entry ${position}`).toEqual({
        status: 200,
        text: "",
      });
  });

  it.each(ENGINES)(`Kafka through %s: read back under ${reader}`, (engine) => {
    expect(whole(consumed[reader]?.[`kafka ${engine}`])).toEqual(complete(plan.count));
  });

  it(`the file broker's stream file: read back under ${reader}, by the broker and the format entry`, () => {
    expect(whole(consumed[reader]?.["file broker"])).toEqual(complete(plan.count));
    expect(whole(consumed[reader]?.["file format"])).toEqual(complete(plan.count));
  });
});
