// @ts-check
// The release on a scratch copy of the workspace: the files of the checkout as they stand (tracked and
// untracked, not ignored) copied to a temporary folder, which gets its own git repository (changesets
// tags what it publishes), its own install, a changeset bumping every published package, `changeset
// version`, the build and `changeset publish` to the local registry. The real checkout is only read.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { run, tail } from "./run.mjs";

/**
 * Copies the checkout at `root` to `scratch` and makes it a repository of one commit.
 * @param {string} root
 * @param {string} scratch
 */
export async function copyWorkspace(root, scratch) {
  const listed = await run(
    ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    {
      cwd: root,
    },
  );
  if (!listed.ok) throw new Error(`git ls-files in ${root} ${listed.why}:\n${tail(listed.output)}`);
  const files = listed.output.split("\0").filter((file) => file !== "");
  let copied = 0;
  for (const file of files) {
    const to = join(scratch, file);
    mkdirSync(dirname(to), { recursive: true });
    try {
      copyFileSync(join(root, file), to);
      copied += 1;
    } catch (error) {
      // A tracked file deleted in the checkout but not yet from git: the copy is of what stands.
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT") throw error;
    }
  }
  for (const argv of [
    ["git", "init", "--quiet", "--initial-branch=main"],
    ["git", "add", "--all"],
    [
      "git",
      "-c",
      "user.name=release rehearsal",
      "-c",
      "user.email=rehearsal@localhost",
      "commit",
      "--quiet",
      "--no-verify",
      "-m",
      "the checkout, copied for a release rehearsal",
    ],
  ]) {
    const result = await run(argv, { cwd: scratch });
    if (!result.ok)
      throw new Error(
        `${argv.join(" ")} in the scratch copy ${result.why}:\n${tail(result.output)}`,
      );
  }
  return copied;
}

/**
 * The workspace's published packages, from packages/*: name, folder, manifest.
 * @param {string} root
 * @returns {{ name: string, dir: string, manifest: Record<string, any> }[]}
 */
export function publishedPackages(root) {
  return readdirSync(join(root, "packages"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const dir = join(root, "packages", entry.name);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      return { name: String(manifest.name), dir, manifest };
    })
    .filter((pkg) => pkg.manifest.private !== true)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A changeset that bumps every published package by a patch, beside the ones the branch has, so the
 * rehearsal versions all of them whatever the pending changesets name.
 * @param {string} scratch
 * @param {string[]} names
 */
export function addRehearsalChangeset(scratch, names) {
  const front = names.map((name) => `"${name}": patch`).join("\n");
  writeFileSync(
    join(scratch, ".changeset", "release-rehearsal.md"),
    `---\n${front}\n---\n\nRelease rehearsal: every published package, versioned together.\n`,
  );
}

/**
 * The scratch copy's .npmrc: the local registry for everything, and the throwaway user's token.
 * @param {string} scratch
 * @param {string} url
 * @param {string} token
 */
export function pointAtRegistry(scratch, url, token) {
  const host = url.replace(/^https?:/, "");
  const file = join(scratch, ".npmrc");
  const own = existsSync(file) ? `${readFileSync(file, "utf8").trimEnd()}\n` : "";
  writeFileSync(file, `${own}registry=${url}\n${host}:_authToken=${token}\n`);
}

/**
 * Turns provenance off in the scratch copy's manifests, and answers which packages asked for it.
 * npm makes a provenance statement only under a CI identity provider (GitHub Actions, GitLab), which
 * a rehearsal on loopback has none of, and a manifest's `publishConfig` wins over any flag or
 * variable; the real release, from CI, publishes with it.
 * @param {string} scratch
 * @returns {string[]}
 */
export function withoutProvenance(scratch) {
  const asked = [];
  for (const pkg of publishedPackages(scratch)) {
    if (pkg.manifest.publishConfig?.provenance !== true) continue;
    asked.push(pkg.name);
    pkg.manifest.publishConfig.provenance = false;
    writeFileSync(join(pkg.dir, "package.json"), `${JSON.stringify(pkg.manifest, null, 2)}\n`);
  }
  return asked;
}
