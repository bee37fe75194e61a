// @ts-check
// What every published tarball must hold for a user: a licence file, its changelog, the metadata npm shows
// (repository, homepage, keywords), and ranges, not exact versions, on the other @ruststream
// packages (an exact peer on core makes every later core release a conflict). The rehearsal holds
// each published tarball to them; `check:package` (checkPacked.mjs) each packed one, before any
// release, with publint and attw besides.
import { bytesText } from "./nodeModules.mjs";

/**
 * @param {import("./tarball.mjs").Published} pkg
 * @param {import("./report.mjs").Report} report
 * @param {{ released: boolean }} options released: the tarball a release published, whose
 *   changelog `changeset version` wrote; a tarball packed from the checkout has none yet
 */
export function checkPackage(pkg, report, { released }) {
  const where = `${pkg.name}@${pkg.version}`;
  report.figure(
    `${where}: ${bytesText(pkg.packedBytes)} packed, ${bytesText(pkg.unpackedBytes)} unpacked, ${pkg.files.length} files`,
  );
  const licence = pkg.files.find((file) => /^licen[cs]e(\.(md|txt))?$/i.test(file.path));
  report.check(
    where,
    "LICENSE in the tarball",
    licence !== undefined,
    licence
      ? licence.path
      : `none among the files (the license field says ${pkg.manifest.license ?? "nothing"})`,
    'put the licence text in each package: a LICENSE file beside its package.json (npm packs it whatever "files" says)',
  );
  // `changeset version` writes each package's CHANGELOG.md from the changesets it consumed.
  if (released) {
    const changelog = pkg.files.find((file) => /^changelog\.md$/i.test(file.path));
    report.check(
      where,
      "CHANGELOG.md in the tarball, with this version's entry",
      changelog !== undefined && (changelog.text ?? "").includes(`## ${pkg.version}`),
      changelog ? changelog.path : "none among the files",
      'let `changeset version` write it (every package in the changesets) and keep it packed (npm packs CHANGELOG.md whatever "files" says)',
    );
  }
  for (const field of ["repository", "homepage", "keywords"]) {
    const value = pkg.manifest[field];
    const present = Array.isArray(value) ? value.length > 0 : value !== undefined && value !== "";
    report.check(
      where,
      `package.json has ${field}`,
      present,
      present ? "" : `the packed package.json has no ${field}`,
      `add "${field}" to each such package's package.json (npm's page shows it)`,
    );
  }
  for (const group of ["dependencies", "peerDependencies", "optionalDependencies"]) {
    for (const [dep, range] of Object.entries(pkg.manifest[group] ?? {})) {
      if (!dep.startsWith("@ruststream/")) continue;
      const spec = String(range);
      const exact = /^=?v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(spec.trim());
      const left = spec.startsWith("workspace:");
      report.check(
        where,
        `${group}["${dep}"] is a range`,
        !exact && !left,
        `packed as "${spec}"`,
        `use "workspace:^" (packs to ^<version>) instead of "workspace:*" (packs to the exact version) in that package's package.json`,
      );
    }
  }
}
