import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

// `npm start` installs the workspace projects `--filter-prod "@ruststream/example-orders..."`
// selects, each with its own dependencies and dev dependencies. None of them may bring a broker
// client or a native build: the quick start must run on a machine with only Node and npm. A dev
// dependency of the example on the CLI once reached, through test dependencies, every broker
// package and librdkafka's build from source.
const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
// The pnpm running these tests (npx's copy on a machine without one of its own), else the one on PATH.
const execPath = process.env.npm_execpath ?? "";
const pnpm = execPath.includes("pnpm") ? [process.execPath, execPath] : ["pnpm"];
const forbidden = ["@confluentinc/kafka-javascript", "kafkajs", "ioredis", "snappy"];

it("npm start's install selects the example, core and file only, none bringing a broker client", () => {
  const listed = JSON.parse(
    execFileSync(
      pnpm[0] as string,
      [
        ...pnpm.slice(1),
        "list",
        "--depth",
        "-1",
        "--json",
        "--filter-prod",
        "@ruststream/example-orders...",
      ],
      { cwd: root, encoding: "utf8" },
    ),
  ) as Array<{ name: string; path: string }>;
  expect(listed.map((p) => p.name).sort()).toEqual([
    "@ruststream/core",
    "@ruststream/example-orders",
    "@ruststream/file",
  ]);
  for (const project of listed) {
    const pkg = JSON.parse(readFileSync(join(project.path, "package.json"), "utf8"));
    const names = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
    expect(
      names.filter((n) => forbidden.includes(n)),
      project.name,
    ).toEqual([]);
  }
});
