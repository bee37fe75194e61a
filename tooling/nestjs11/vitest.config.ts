import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { defineProject } from "vitest/config";

// @ruststream/nestjs's tests, run again on NestJS 11: the package's own test files and global setup
// (which starts Redis for its Redis file), with every import of a Nest package (the tests' and the
// package source's) resolved to the NestJS 11 this folder installs, whose packages find one another
// (and class-validator) through their own peers. The package's own project runs them on NestJS 12.
const nest11 = createRequire(import.meta.url);
const nestPackages = ["common", "core", "microservices", "testing"];

const source = { conditions: ["@ruststream/source"] };
const nestjs = fileURLToPath(new URL("../../packages/nestjs", import.meta.url));

export default defineProject({
  resolve: {
    ...source,
    alias: nestPackages.map((name) => ({
      find: `@nestjs/${name}`,
      replacement: nest11.resolve(`@nestjs/${name}`),
    })),
  },
  ssr: { resolve: source },
  test: {
    name: "nestjs11",
    sequence: { groupOrder: 1 },
    dir: nestjs,
    include: ["test/**/*.test.ts"],
    globalSetup: [`${nestjs}/test/globalSetup.ts`],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
