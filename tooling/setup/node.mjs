// @ts-check
// The Node.js the project's commands run on. The floor is the root package.json's `engines.node`;
// a machine whose own Node is older gets the pinned one from the npm registry's `node-<os>-<arch>`
// package (the Node binary and its headers, so native addons build against it), unpacked once into
// a cache folder outside the clone and reused by every later run.
import { existsSync, readFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { cachedPackage } from "./cachedPackage.mjs";
import { say } from "./step.mjs";

/** The line the whole suite runs on where the machine's own Node is below the floor. */
export const pinnedNode = "24.22.3";

/** Every maintained line the tests run on: the whole suite on one, the brokerless projects on all. */
export const nodeLines = ["22.23.5", "24.22.3", "26.12.1"];

/** The floor's major version, from `engines.node` (">=22") of the root package.json. */
export function nodeFloor(/** @type {string} */ root) {
  const engines = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).engines?.node ?? "";
  const major = /^>=\s*(\d+)/.exec(engines)?.[1];
  if (major === undefined) throw new Error(`package.json engines.node is "${engines}", not ">=N"`);
  return Number(major);
}

const major = (/** @type {string} */ version) => Number(version.split(".")[0]);

/**
 * The folder of Node `version` (its `bin/node`, `include/node`), fetched from the npm registry's
 * `node-<os>-<arch>` package the first time. npm itself is the machine's: it runs on any of these
 * lines.
 */
export function ensureNode(/** @type {string} */ version) {
  return cachedPackage({
    kind: "node",
    title: `Node ${version}`,
    pkg: `node-${process.platform}-${process.arch}`,
    version,
    binary: join("bin", "node"),
  });
}

/**
 * The environment that runs commands on the Node in `dir`: its bin first on PATH (so `node`, and
 * every `#!/usr/bin/env node` script, is that Node), and native addons built against its headers.
 */
export function nodeEnv(/** @type {string} */ dir, env = process.env) {
  return {
    ...env,
    PATH: `${join(dir, "bin")}${delimiter}${env.PATH ?? ""}`,
    npm_config_nodedir: dir,
  };
}

/**
 * The environment that runs commands on the Node running this one, as `nodeEnv` does for a fetched
 * one: its bin first on PATH, and its headers named for native builds outright rather than
 * inherited, since an npmrc's `nodedir` may name another Node's headers (a `~/.npmrc` with
 * `nodedir=/usr` names the system Node's) and librdkafka's addon built against them does not load.
 * A Node with no headers beside it drops an inherited `nodedir`, so node-gyp fetches the matching
 * ones.
 */
export function ownNodeEnv(env = process.env) {
  const dir = dirname(dirname(process.execPath));
  const own = nodeEnv(dir, env);
  if (existsSync(join(dir, "include", "node", "node_version.h"))) return own;
  const { npm_config_nodedir: _none, ...rest } = own;
  return rest;
}

/**
 * The environment the project's commands run in: the machine's own Node's when it meets the floor,
 * else the pinned Node's, said in one line.
 */
export function projectNode(/** @type {string} */ root) {
  const floor = nodeFloor(root);
  const own = process.versions.node;
  if (major(own) >= floor) return { version: own, env: ownNodeEnv() };
  const dir = ensureNode(pinnedNode);
  say(
    `this machine's Node ${own} is older than the project's floor (${floor}): running on Node ${pinnedNode}, cached in ${dir}`,
  );
  return { version: pinnedNode, env: nodeEnv(dir) };
}
