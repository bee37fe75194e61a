// @ts-check
// Jar resolution for the JVM brokers: a resolver-only pom per broker, copied into a libs folder in
// the state dir. The local Maven repository keeps the downloads, and a marker holding the pom's hash
// makes a second `up` on the same machine resolve (and download) nothing.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run } from "./process.mjs";

const DEPENDENCY_PLUGIN =
  "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies";

/**
 * Makes `libDir` hold the runtime jars of `pomFile`, resolving only when the pom changed.
 * @param {string} pomFile
 * @param {string} libDir
 * @param {(line: string) => void} [log]
 * @returns {Promise<string>} a java classpath for the jars
 */
export async function resolveJars(pomFile, libDir, log = () => {}) {
  const hash = createHash("sha256").update(readFileSync(pomFile)).digest("hex");
  const marker = join(libDir, ".resolved");
  if (!existsSync(marker) || readFileSync(marker, "utf8") !== hash) {
    log(`resolving jars for ${pomFile} (first run on this machine downloads them)`);
    rmSync(libDir, { recursive: true, force: true });
    await run("mvn", [
      "-q",
      "-B",
      "-f",
      pomFile,
      DEPENDENCY_PLUGIN,
      "-DincludeScope=runtime",
      `-DoutputDirectory=${libDir}`,
    ]);
    writeFileSync(marker, hash);
  }
  return `${libDir}/*`;
}
