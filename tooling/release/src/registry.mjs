// @ts-check
// The local npm registry the rehearsal publishes to: Verdaccio on loopback, its config, storage and
// users in the rehearsal's temporary folder. @ruststream/* is served from its own storage only (a
// rehearsal must never install the real published packages by mistake); every other package is
// proxied to the npm registry, as a user's install would get it.
import { spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join } from "node:path";

const require = createRequire(import.meta.url);

/** The npm registry everything but @ruststream/* comes from. */
export const uplink = "https://registry.npmjs.org/";

/**
 * Starts Verdaccio in `dir` and creates a throwaway user to publish with.
 * @param {string} dir
 * @returns {Promise<{ url: string, token: string, log: string, stop: () => Promise<void> }>}
 */
export async function startRegistry(dir) {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const config = join(dir, "config.yaml");
  writeFileSync(config, configText(dir));
  const log = join(dir, "verdaccio.log");
  const fd = openSync(log, "a");
  const bin = join(dirname(require.resolve("verdaccio/package.json")), "bin", "verdaccio");
  const child = spawn(
    process.execPath,
    [bin, "--config", config, "--listen", `127.0.0.1:${port}`],
    {
      stdio: ["ignore", fd, fd],
    },
  );
  closeSync(fd);
  let exited = false;
  const gone = new Promise((resolve) => child.on("exit", resolve));
  gone.then(() => {
    exited = true;
  });
  // Last resort: a rehearsal that dies any other way still takes the registry with it.
  const onExit = () => child.kill("SIGKILL");
  process.on("exit", onExit);
  const stop = async () => {
    process.off("exit", onExit);
    if (exited) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await gone;
    clearTimeout(timer);
  };
  try {
    await waitUntilServing(url, () => exited, log);
    return { url, token: await addUser(url), log, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function configText(/** @type {string} */ dir) {
  return `# Written by tooling/release for one rehearsal; deleted with its folder.
storage: ${JSON.stringify(join(dir, "storage"))}
auth:
  htpasswd:
    file: ${JSON.stringify(join(dir, "htpasswd"))}
    max_users: 10
uplinks:
  npmjs:
    url: ${uplink}
    timeout: 120s
    maxage: 30m
packages:
  "@ruststream/*":
    access: $all
    publish: $authenticated
    unpublish: $authenticated
  "**":
    access: $all
    publish: $authenticated
    proxy: npmjs
web:
  enable: false
max_body_size: 200mb
server:
  keepAliveTimeout: 60
log:
  type: stdout
  format: pretty
  level: warn
`;
}

/** A loopback port nothing listens on now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * @param {string} url
 * @param {() => boolean} exited
 * @param {string} log
 */
async function waitUntilServing(url, exited, log) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (exited()) throw new Error(`Verdaccio exited before it served; its log:\n${logTail(log)}`);
    try {
      const response = await fetch(new URL("-/ping", url));
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Verdaccio did not answer ${url}-/ping within 60 s; its log:\n${logTail(log)}`);
}

/** Creates the rehearsal's user (the htpasswd file starts empty) and returns its token. */
async function addUser(/** @type {string} */ url) {
  const name = "rehearsal";
  const response = await fetch(new URL(`-/user/org.couchdb.user:${name}`, url), {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      name,
      password: `rehearsal-${process.pid}-${Date.now()}`,
      type: "user",
    }),
  });
  const body = /** @type {{ token?: string }} */ (await response.json().catch(() => ({})));
  if (!response.ok || typeof body.token !== "string")
    throw new Error(
      `Verdaccio refused the throwaway user (HTTP ${response.status}): ${JSON.stringify(body)}`,
    );
  return body.token;
}

export function logTail(/** @type {string} */ log) {
  try {
    return readFileSync(log, "utf8").trimEnd().split("\n").slice(-20).join("\n");
  } catch {
    return "(no log)";
  }
}
