#!/usr/bin/env node
// @ts-check
// `npm start`: the quick start's example. Installs only what examples/orders needs (the example and
// the workspace packages its production dependencies name, each with its own dependencies: no broker
// client, no native addon), then runs it. Brings the pinned Node and pnpm where the machine lacks
// them, as `npm test` does. `--filter-prod` selects along production edges only: the example's dev
// dependency on the CLI reaches, through the CLI's and the AsyncAPI package's test dependencies,
// every broker package and librdkafka's native build.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { projectNode } from "./setup/node.mjs";
import { pnpm, pnpmCommand } from "./setup/pnpm.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const example = "@ruststream/example-orders";
const node = projectNode(root);
const project = { root, env: node.env, pnpm: pnpmCommand(root, node.env) };

pnpm(
  project,
  "installing the example",
  ["install", "--frozen-lockfile", "--prefer-offline", "--filter-prod", `${example}...`],
  {
    quiet: true,
    fix: "read the install's output above; run `npx pnpm install --filter-prod @ruststream/example-orders...` to see it whole",
  },
);
pnpm(project, "running the example", ["--filter", example, "start"], {
  fix: "read the example's error above; examples/orders/README.md says what it does",
});
