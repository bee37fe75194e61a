// @ts-check
// Four Redis 7.0 instances from Debian's redis-server, one per kind of test the Redis package needs:
// plain (no persistence), persistent (AOF, fsync always: survives a restart), protected (password on
// the default user plus an ACL user) and TLS (a CA and a server certificate made at first start,
// testCa.mjs).
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import {
  isAlive,
  portOpen,
  rssMiB,
  run,
  runningPid,
  startDetached,
  stopByPidFile,
  tail,
  waitFor,
  withLock,
} from "./process.mjs";
import { envPort, stateDir } from "./state.mjs";
import { ensureTestCertificates, testCertificates } from "./testCa.mjs";

export const name = "redis";

const HOST = "127.0.0.1";
export const ACL_USER = "ruststream";

/**
 * @typedef {"plain" | "persistent" | "protected" | "tls"} InstanceName
 * @typedef {{ name: InstanceName, port: number, portVar: string }} Instance
 */

/** @returns {Instance[]} */
function instances() {
  return [
    { name: "plain", port: envPort("REDIS_PORT", 16379), portVar: "REDIS_PORT" },
    {
      name: "persistent",
      port: envPort("REDIS_PERSISTENT_PORT", 16380),
      portVar: "REDIS_PERSISTENT_PORT",
    },
    {
      name: "protected",
      port: envPort("REDIS_PROTECTED_PORT", 16381),
      portVar: "REDIS_PROTECTED_PORT",
    },
    { name: "tls", port: envPort("REDIS_TLS_PORT", 16382), portVar: "REDIS_TLS_PORT" },
  ];
}

/** @param {InstanceName} instance */
const dirOf = (instance) => stateDir("redis", instance);
/** @param {InstanceName} instance */
const pidFileOf = (instance) => join(dirOf(instance), "redis.pid");
/** @param {InstanceName} instance */
const logFileOf = (instance) => join(dirOf(instance), "redis.log");

/**
 * Passwords are made once per machine and kept in the state folder, so every clone and test run
 * agrees on them; they only ever guard a loopback port. The cluster and the Sentinel set use them
 * too (redisCluster.mjs, redisSentinel.mjs).
 */
export function secrets() {
  const file = join(stateDir("redis"), "secrets.json");
  if (!existsSync(file)) {
    const make = () => randomBytes(12).toString("hex");
    writeFileSync(file, JSON.stringify({ password: make(), aclPassword: make() }), { mode: 0o600 });
  }
  return /** @type {{ password: string, aclPassword: string }} */ (
    JSON.parse(readFileSync(file, "utf8"))
  );
}

/** Paths of the TLS material (testCa.mjs), made at the TLS instance's first start. */
const tlsFiles = () => testCertificates(stateDir("redis", "tls-certs"));

const ensureCertificates = () =>
  ensureTestCertificates(stateDir("redis", "tls-certs"), "ruststream test CA");

/** @param {Instance} instance */
function configFor(instance) {
  const dir = dirOf(instance.name);
  const lines = [
    `bind ${HOST}`,
    "protected-mode yes",
    `dir ${dir}`,
    "daemonize no",
    'save ""',
    `logfile ""`,
  ];
  if (instance.name === "persistent") {
    lines.push("appendonly yes", "appendfsync always");
  } else {
    lines.push("appendonly no");
  }
  if (instance.name === "protected") {
    const s = secrets();
    lines.push(`requirepass ${s.password}`, `user ${ACL_USER} on >${s.aclPassword} ~* &* +@all`);
  }
  if (instance.name === "tls") {
    const f = tlsFiles();
    lines.push(
      "port 0",
      `tls-port ${instance.port}`,
      `tls-cert-file ${f.cert}`,
      `tls-key-file ${f.key}`,
      `tls-ca-cert-file ${f.ca}`,
      // Clients prove nothing about themselves; they must verify the server against our CA.
      "tls-auth-clients no",
    );
  } else {
    lines.push(`port ${instance.port}`);
  }
  const file = join(dir, "redis.conf");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

/** @param {Instance} instance */
function clientOptions(instance) {
  /** @type {import("ioredis").RedisOptions} */
  const options = {
    host: HOST,
    port: instance.port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 2000,
  };
  if (instance.name === "protected") options.password = secrets().password;
  if (instance.name === "tls")
    options.tls = { ca: readFileSync(tlsFiles().ca), servername: "localhost" };
  return options;
}

/**
 * The pid the server on this instance's port reports, proving whether it is ours.
 * @param {Instance} instance
 * @returns {Promise<number | undefined>}
 */
async function serverPid(instance) {
  const client = new Redis(clientOptions(instance));
  client.on("error", () => {});
  try {
    await client.connect();
    const info = await client.info("server");
    const match = /process_id:(\d+)/.exec(info);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  } finally {
    client.disconnect();
  }
}

/** Installs Debian's redis-server when missing (as root), else says which command to run. */
export async function ensureInstalled(/** @type {(line: string) => void} */ log) {
  const has = await run("sh", ["-c", "command -v redis-server"]).then(
    () => true,
    () => false,
  );
  if (has) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      "redis-server is not installed: run `sudo apt-get install -y redis-server` (Debian's 7.0) and retry",
    );
  }
  log("installing Debian's redis-server (apt-get)");
  await run("apt-get", ["update", "-qq"]);
  await run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "redis-server"], {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
}

/**
 * Starts one instance unless it already runs.
 * @param {Instance} instance
 * @param {(line: string) => void} log
 * @returns {Promise<boolean>} whether it was already running
 */
async function upInstance(instance, log) {
  const pidFile = pidFileOf(instance.name);
  const pid = runningPid(pidFile);
  if (pid !== undefined && (await serverPid(instance)) === pid) return true;
  if (await portOpen(instance.port)) {
    throw new Error(
      `redis ${instance.name}: port ${instance.port} is held by a process these tools did not start; ` +
        `stop it or set ${instance.portVar} to a free port`,
    );
  }
  if (pid !== undefined) await stopByPidFile(pidFile);
  if (instance.name === "tls") await ensureCertificates();
  const conf = configFor(instance);
  const logFile = logFileOf(instance.name);
  writeFileSync(logFile, "");
  const started = startDetached({
    command: "redis-server",
    args: [conf],
    logFile,
    pidFile,
    cwd: dirOf(instance.name),
  });
  try {
    await waitFor(async () => (await serverPid(instance)) === started, {
      timeoutMs: 20_000,
      pid: started,
      what: `redis ${instance.name} on ${HOST}:${instance.port}`,
    });
  } catch (error) {
    if (isAlive(started)) await stopByPidFile(pidFile);
    throw new Error(
      `${/** @type {Error} */ (error).message}\n--- ${logFile} ---\n${tail(logFile)}`,
    );
  }
  log(`[brokers] redis ${instance.name} on ${HOST}:${instance.port}`);
  return false;
}

/** @param {(line: string) => void} log */
export async function up(log) {
  const begin = Date.now();
  await ensureInstalled(log);
  let already = true;
  // Vitest projects run their global setups together: one `up` starts, the others wait and see.
  await withLock(
    join(stateDir("redis"), "up.lock"),
    { what: "redis", timeoutMs: 60_000 },
    async () => {
      for (const instance of instances()) {
        if (!(await upInstance(instance, log))) already = false;
      }
    },
  );
  return {
    already,
    address: instances()
      .map((i) => `${HOST}:${i.port}`)
      .join(", "),
    ms: Date.now() - begin,
  };
}

/** @param {(line: string) => void} _log */
export async function down(_log) {
  let stopped = false;
  for (const instance of instances()) {
    if (await stopByPidFile(pidFileOf(instance.name))) stopped = true;
  }
  return stopped;
}

/**
 * Restarts one instance (the persistent one, for restart tests): a clean SIGTERM, so an AOF with
 * `appendfsync always` has every acknowledged write on disk, then a start on the same data.
 * @param {InstanceName} instanceName
 * @param {{ hard?: boolean }} [options] hard: SIGKILL instead of a clean stop, as a crash would
 */
export async function restart(instanceName, options = {}) {
  const instance = instances().find((i) => i.name === instanceName);
  if (!instance) throw new Error(`unknown redis instance "${instanceName}"`);
  const pidFile = pidFileOf(instance.name);
  // Under `up`'s lock: a global setup running meanwhile (another project, another run) would find
  // the port free and start a second server beside the one this starts, losing the pid file.
  await withLock(
    join(stateDir("redis"), "up.lock"),
    { what: "redis", timeoutMs: 60_000 },
    async () => {
      if (options.hard) {
        const pid = runningPid(pidFile);
        if (pid !== undefined) process.kill(pid, "SIGKILL");
      }
      await stopByPidFile(pidFile);
      // The kernel can take a moment to release the listening socket of a killed process.
      await waitFor(async () => !(await portOpen(instance.port)), {
        timeoutMs: 5000,
        intervalMs: 20,
        what: `redis ${instance.name} releasing port ${instance.port}`,
      });
      await upInstance(instance, () => {});
    },
  );
}

/**
 * Runs `fn` holding `instanceName` alone: a test that restarts an instance holds it for its whole
 * body, so two such tests (two files of one run, two projects, two runs) never restart it under
 * each other, which fails the one mid-way by luck. Tests of other instances are not held up.
 * @template T
 * @param {InstanceName} instanceName
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(instanceName, fn) {
  return withLock(
    join(stateDir("redis"), `${instanceName}.exclusive.lock`),
    { what: `redis ${instanceName}, held by a test that restarts it`, timeoutMs: 10 * 60_000 },
    fn,
  );
}

export async function status() {
  const result = [];
  for (const instance of instances()) {
    const pid = runningPid(pidFileOf(instance.name));
    const running = pid !== undefined && (await serverPid(instance)) === pid;
    result.push({
      running,
      address: `${instance.name} ${HOST}:${instance.port}`,
      ...(running && pid !== undefined ? { pid, rssMiB: rssMiB(pid) } : {}),
    });
  }
  return result;
}

export function env() {
  const [plain, persistent, protectedOne, tls] = instances();
  const s = secrets();
  return {
    REDIS_URL: `redis://${HOST}:${plain?.port}`,
    REDIS_PERSISTENT_URL: `redis://${HOST}:${persistent?.port}`,
    REDIS_PASSWORD_URL: `redis://:${s.password}@${HOST}:${protectedOne?.port}`,
    REDIS_ACL_URL: `redis://${ACL_USER}:${s.aclPassword}@${HOST}:${protectedOne?.port}`,
    REDIS_TLS_URL: `rediss://${HOST}:${tls?.port}`,
    REDIS_TLS_CA: tlsFiles().ca,
  };
}
