// @ts-check
// The Go that builds nats-server (natsServer.mjs): the machine's own when it is 1.21 or newer (such a
// Go fetches the toolchain a module asks for by itself), else Go's own toolchain module
// (golang.org/toolchain, what Go 1.21+ fetches when it switches toolchains) from the Go module
// proxy, its zip checked against a pinned SHA-256 and unpacked once into a cache folder outside any
// clone. So a fresh machine with no Go, or Debian's 1.19, builds the server with no manual step.
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { run } from "./process.mjs";

/** The toolchain fetched when the machine has no usable Go (nats-server 2.15's go.mod asks for 1.26). */
export const GO_VERSION = "go1.26.8";

/**
 * SHA-256 of the Go module proxy's zip of golang.org/toolchain@v0.0.1-<GO_VERSION>.<os>-<arch>,
 * each taken from a download of it (the checksum database, which Go itself asks, is not reachable
 * from every machine that reaches the proxy).
 */
const ZIP_SHA256 = /** @type {Record<string, string>} */ ({
  "linux-amd64": "30c2b1bf7dcc88d3eb0a1364e47ddd9128edb3110a30e8a0ef61cd5856b31de7",
  "linux-arm64": "02b36b6787b3ac767668f630e2998df45a3b1f9ffee08d1bf3ef6487cd658d99",
  "darwin-amd64": "fe99a2009e5bb51e06d7784f1a486478673512041c2671157bd382806e2aedcf",
  "darwin-arm64": "0aad5fb52b88498885290178adc0bcfe429bc63012621af9f83282eb640bd9c7",
});

const goArch = /** @type {Record<string, string>} */ ({ x64: "amd64", arm64: "arm64" });
const platform = `${process.platform}-${goArch[process.arch] ?? process.arch}`;
const MODULE_VERSION = `v0.0.1-${GO_VERSION}.${platform}`;

/** What a person does when the fetch cannot work: said by every error of this file. */
const GO_FIX = `install Go 1.21 or newer (Go's release tarball unpacked into /usr/local/go, with /usr/local/go/bin on PATH; Debian bookworm's golang-go is 1.19, too old), or make the Go module proxy reachable (GOPROXY, else https://proxy.golang.org)`;

function cacheDir() {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(cache, "ruststream", "go", GO_VERSION);
}

/** The machine's `go` if it is 1.21 or newer, else undefined. */
async function machineGo() {
  const version = await run("go", ["env", "GOVERSION"]).catch(() => "");
  const m = /^go(\d+)\.(\d+)/.exec(version.trim());
  if (m === null) return undefined;
  return Number(m[1]) > 1 || Number(m[2]) >= 21 ? "go" : undefined;
}

/** The first proxy of GOPROXY (a list split by commas or pipes; "direct" and "off" are no proxy). */
function proxy() {
  const first = (process.env.GOPROXY ?? "").split(/[,|]/)[0]?.trim() ?? "";
  return first === "" || first === "direct" || first === "off"
    ? "https://proxy.golang.org"
    : first.replace(/\/$/, "");
}

/** @param {string} file */
function sha256(file) {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(file)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}

/**
 * Fetches and unpacks the pinned toolchain (the caller holds the build's lock); returns its `go`.
 * @param {(line: string) => void} log
 */
async function fetchToolchain(log) {
  const dir = cacheDir();
  const go = join(dir, "bin", "go");
  if (existsSync(go)) return go;
  const expected = ZIP_SHA256[platform];
  if (expected === undefined) {
    throw new Error(`no Go toolchain is pinned for ${platform} in this file`);
  }
  const url = `${proxy()}/golang.org/toolchain/@v/${MODULE_VERSION}.zip`;
  const parent = join(dir, "..");
  mkdirSync(parent, { recursive: true });
  const scratch = join(parent, `.${GO_VERSION}-${process.pid}`);
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch);
  try {
    log(`[brokers] no Go 1.21 or newer on PATH: fetching ${GO_VERSION} from ${url}`);
    const response = await fetch(url).catch((/** @type {Error} */ error) => {
      throw new Error(`fetching ${url} failed: ${error.message}`);
    });
    if (!response.ok) throw new Error(`fetching ${url} answered ${response.status}`);
    const zip = join(scratch, "toolchain.zip");
    await writeFile(zip, Buffer.from(await response.arrayBuffer()));
    const actual = await sha256(zip);
    if (actual !== expected) {
      throw new Error(`${url} has SHA-256 ${actual}, not the pinned ${expected}`);
    }
    // python3 is on every machine the tests run on (tooling/setup/system.mjs: node-gyp needs it).
    await run("python3", ["-m", "zipfile", "-e", zip, scratch]);
    const root = join(scratch, "golang.org", `toolchain@${MODULE_VERSION}`);
    // A module zip keeps no file modes: the commands are made executable, as Go does when it
    // switches to a fetched toolchain.
    const tools = join(root, "pkg", "tool", `${process.platform}_${goArch[process.arch]}`);
    for (const folder of [join(root, "bin"), tools]) {
      for (const name of readdirSync(folder)) await chmod(join(folder, name), 0o755);
    }
    // A rename, so a fetch stopped half way never leaves a folder that looks complete.
    renameSync(root, dir);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  log(`[brokers] ${GO_VERSION} unpacked into ${dir}`);
  return go;
}

/**
 * The `go` command that builds nats-server, and the environment it runs in. A fetched toolchain
 * runs with GOTOOLCHAIN=local (it is the one the build needs; it fetches no other).
 * @param {(line: string) => void} log
 * @returns {Promise<{ go: string, env: NodeJS.ProcessEnv }>}
 */
export async function goForBuild(log) {
  const own = await machineGo();
  if (own !== undefined) return { go: own, env: process.env };
  try {
    const go = await fetchToolchain(log);
    return { go, env: { ...process.env, GOTOOLCHAIN: "local", GOROOT: join(go, "..", "..") } };
  } catch (error) {
    throw new Error(
      `no Go to build nats-server with (${/** @type {Error} */ (error).message}): ${GO_FIX}`,
    );
  }
}
