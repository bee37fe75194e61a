import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

// Both src/ and dist/ sit beside package.json and templates/, so one relative path serves the
// source (tests) and the published build.
const packageRoot = new URL("../", import.meta.url);

/**
 * This package's version: the new project's @ruststream dependencies get it too, since every
 * @ruststream package is released at the one version, so the project installs from whatever
 * registry served this one.
 */
export function ownVersion(): string {
  const text = readFileSync(new URL("package.json", packageRoot), "utf8");
  const { version } = JSON.parse(text) as { version?: unknown };
  if (typeof version !== "string")
    throw new Error("@ruststream/create's package.json has no version");
  return version;
}

/** Where the templates are: built from the repository's examples by `pnpm build`. */
export function templatesDirectory(): string {
  return fileURLToPath(new URL("templates/", packageRoot));
}
