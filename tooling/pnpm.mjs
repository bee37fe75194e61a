#!/usr/bin/env node
// @ts-check
// `node tooling/pnpm.mjs <args>`: pnpm at the pinned version, on the project's Node (the pinned one
// where the machine's is below the floor), for a machine that has neither: `.ci/run`'s release checks
// run through it. It installs nothing; `npm start` and `npm test` do.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { projectNode } from "./setup/node.mjs";
import { pnpm, pnpmCommand } from "./setup/pnpm.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const node = projectNode(root);
pnpm({ root, env: node.env, pnpm: pnpmCommand(root, node.env) }, `pnpm ${args.join(" ")}`, args, {
  fix: "read the error above",
});
