// @ts-check
// The nats-server binary: built once per machine from the Go module proxy (`go install`, with the
// machine's Go or one goToolchain.mjs fetches), kept in a cache folder outside any clone, so a
// second `up` (any clone) reuses it.
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { goForBuild } from "./goToolchain.mjs";
import { run, withLock } from "./process.mjs";

export const VERSION = "v2.15.3";
const MODULE = "github.com/nats-io/nats-server/v2";

/** Where the built server lives: $XDG_CACHE_HOME (else ~/.cache)/ruststream/nats-server/<version>. */
export function serverDir() {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(cache, "ruststream", "nats-server", VERSION);
}

export const serverBinary = () => join(serverDir(), "nats-server");

/**
 * Builds the server unless the cache holds it, under a lock so two global setups never build it
 * twice; the binary appears by a rename, so a build killed half-way leaves nothing that looks done.
 * @param {(line: string) => void} log
 * @returns {Promise<string>} the binary's path
 */
export async function ensureServer(log) {
  const binary = serverBinary();
  if (existsSync(binary)) return binary;
  const dir = serverDir();
  mkdirSync(dir, { recursive: true });
  const lock = { what: "the nats-server build", timeoutMs: 15 * 60_000 };
  return withLock(join(dir, "build.lock"), lock, async () => {
    if (existsSync(binary)) return binary;
    const { go, env } = await goForBuild(log).catch((/** @type {Error} */ error) => {
      throw new Error(
        `nats: nats-server ${VERSION} is built with \`go install\`: ${error.message}`,
      );
    });
    const begin = Date.now();
    log(`[brokers] building nats-server ${VERSION} with go install (once per machine, about 40 s)`);
    const scratch = join(dir, `build-${process.pid}`);
    rmSync(scratch, { recursive: true, force: true });
    try {
      // Outside any module (cwd is the cache folder), so no file of a clone shapes the build.
      await run(go, ["install", `${MODULE}@${VERSION}`], {
        cwd: dir,
        env: { ...env, GOBIN: scratch, GOFLAGS: "" },
      });
      const version = await run(join(scratch, "nats-server"), ["--version"]);
      if (!version.includes(VERSION.slice(1)))
        throw new Error(`the built nats-server says "${version.trim()}", not ${VERSION}`);
      renameSync(join(scratch, "nats-server"), binary);
    } catch (error) {
      throw new Error(
        `nats: building nats-server ${VERSION} failed (\`${go} install ${MODULE}@${VERSION}\`, which fetches its modules from the Go module proxy):\n${/** @type {Error} */ (error).message}`,
      );
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    log(`[brokers] nats-server ${VERSION} built in ${((Date.now() - begin) / 1000).toFixed(1)} s`);
    return binary;
  });
}
