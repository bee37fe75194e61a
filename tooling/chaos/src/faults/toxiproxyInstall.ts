// Toxiproxy, the fault proxy, is a Go module: built once with `go install` into a per-user cache
// (never into the clone), then reused. CHAOS_TOXIPROXY_BIN points at a binary built elsewhere.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const TOXIPROXY_VERSION = "v2.5.0";
const MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server";

function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache");
  return join(base, "ruststream-chaos", `toxiproxy-${TOXIPROXY_VERSION}`);
}

/** The toxiproxy server binary, built on first use. */
export function toxiproxyBinary(log: (line: string) => void): string {
  const given = process.env.CHAOS_TOXIPROXY_BIN;
  if (given !== undefined) {
    if (!existsSync(given)) throw new Error(`CHAOS_TOXIPROXY_BIN=${given}: no such file`);
    return given;
  }
  const dir = cacheDir();
  const binary = join(dir, "server");
  if (existsSync(binary)) return binary;
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
  } catch {
    throw new Error(
      `the fault proxy (Toxiproxy ${TOXIPROXY_VERSION}) is built with Go, and \`go\` is not on PATH: install Go 1.22 or later (https://go.dev/dl/), or set CHAOS_TOXIPROXY_BIN to a toxiproxy-server binary, or run only the scenarios without the proxy (--scenario file-kill)`,
    );
  }
  mkdirSync(dir, { recursive: true });
  log(`[chaos] building Toxiproxy ${TOXIPROXY_VERSION} into ${dir} (once)`);
  execFileSync("go", ["install", `${MODULE}@${TOXIPROXY_VERSION}`], {
    env: { ...process.env, GOBIN: dir },
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (!existsSync(binary)) throw new Error(`go install ${MODULE} left no ${binary}`);
  return binary;
}
