// @ts-check
// A package's tarball read entry by entry (a plain tar reader: the files are few and small, and node
// has gunzip): as the registry serves a published version (the rehearsal), or as `pnpm pack` wrote
// it (check:package).
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";

/**
 * @typedef {{ name: string, version: string, tarball: string, packedBytes: number, unpackedBytes: number,
 *   files: { path: string, size: number, text?: string }[], manifest: Record<string, any> }} Published
 */

/**
 * The version `version` of `name` as the registry at `url` serves it, its tarball unpacked in memory.
 * @param {string} url
 * @param {string} name
 * @param {string} version
 * @returns {Promise<Published>}
 */
export async function readPublished(url, name, version) {
  const response = await fetch(new URL(name.replace("/", "%2f"), url));
  if (!response.ok) throw new Error(`${name}: the registry answered HTTP ${response.status}`);
  const packument = /** @type {{ versions?: Record<string, { dist?: { tarball?: string } }> }} */ (
    await response.json()
  );
  const tarball = packument.versions?.[version]?.dist?.tarball;
  if (tarball === undefined) throw new Error(`${name}@${version} is not in the registry`);
  const got = await fetch(tarball);
  if (!got.ok) throw new Error(`${name}@${version}: its tarball answered HTTP ${got.status}`);
  return unpack(Buffer.from(await got.arrayBuffer()), tarball, `${name}@${version}`);
}

/**
 * A tarball `pnpm pack` wrote, read as {@link readPublished} reads a published one (its name and
 * version from its package.json).
 * @param {string} path
 * @returns {Published}
 */
export function readPacked(path) {
  return unpack(readFileSync(path), path, path);
}

/**
 * @param {Buffer} packed the .tgz's bytes
 * @param {string} tarball where they came from
 * @param {string} what how an error names the tarball
 * @returns {Published}
 */
function unpack(packed, tarball, what) {
  const entries = readTar(gunzipSync(packed));
  const manifestBytes = entries.get("package/package.json");
  if (manifestBytes === undefined) throw new Error(`${what}: the tarball holds no package.json`);
  const manifest = JSON.parse(manifestBytes.toString("utf8"));
  const files = [...entries].map(([path, data]) => {
    const inside = path.replace(/^package\//, "");
    // The text of the files a check reads (the changelog); the rest by size alone.
    return /\.md$/i.test(inside)
      ? { path: inside, size: data.length, text: data.toString("utf8") }
      : { path: inside, size: data.length };
  });
  return {
    name: manifest.name,
    version: manifest.version,
    tarball,
    packedBytes: packed.length,
    unpackedBytes: files.reduce((sum, file) => sum + file.size, 0),
    files,
    manifest,
  };
}

/**
 * The regular files of a tar archive, by path (ustar, with pax headers for long paths).
 * @param {Buffer} tar
 */
function readTar(tar) {
  /** @type {Map<string, Buffer>} */
  const files = new Map();
  let offset = 0;
  /** @type {string | undefined} */
  let longPath;
  while (offset + 512 <= tar.length) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (/** @type {number} */ start, /** @type {number} */ length) =>
      header
        .subarray(start, start + length)
        .toString("utf8")
        .replace(/\0.*$/s, "");
    const size = Number.parseInt(field(124, 12).trim() || "0", 8);
    const type = field(156, 1);
    const prefix = field(345, 155);
    const name = longPath ?? (prefix ? `${prefix}/${field(0, 100)}` : field(0, 100));
    const data = tar.subarray(offset + 512, offset + 512 + size);
    longPath = undefined;
    if (type === "x") {
      longPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString("utf8"))?.[1];
    } else if (type === "0" || type === "") {
      files.set(name, data);
    }
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}
