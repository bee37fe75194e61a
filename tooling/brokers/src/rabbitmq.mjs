// @ts-check
// RabbitMQ 3.10 from Debian's rabbitmq-server (Erlang 25), one node started by hand on 127.0.0.1:
// never the package's system service, never its /var/lib/rabbitmq or /etc/rabbitmq. The node, its
// Erlang port mapper (epmd) and its distribution port are ours, on ports of their own, so nothing
// else on the machine that speaks Erlang (or another RabbitMQ) meets them. Plain AMQP, AMQP over TLS
// (a CA and a server certificate made at first start, testCa.mjs), the management API (the tests
// read queues and connections through it) and the consistent-hash exchange; a user with a password
// made once per machine.
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import amqp from "amqplib";
import { holdServiceStarts } from "../../setup/noServiceStarts.mjs";
import {
  isAlive,
  portOpen,
  rssMiB,
  run,
  runningPid,
  sleep,
  startDetached,
  stopByPidFile,
  tail,
  waitFor,
  withLock,
} from "./process.mjs";
import { envPort, stateDir } from "./state.mjs";
import { ensureTestCertificates, testCertificates } from "./testCa.mjs";

export const name = "rabbitmq";

const HOST = "127.0.0.1";
export const USER = "ruststream";
/** The node's name; `localhost` resolves everywhere, so no host name is looked up. */
const NODE = "ruststream@localhost";
/** Debian's scripts themselves, not the wrappers in /usr/sbin that switch to the rabbitmq user. */
const SBIN = "/usr/lib/rabbitmq/bin";
/** A cold start on 2 cores takes 5-8 s; a node replaying a large queue index takes longer. */
const START_BUDGET_MS = 90_000;

/**
 * Every port the node uses, each from its variable. RabbitMQ's own defaults (5672, 5671, 15672,
 * 25672, epmd's 4369) are left to whatever else runs here; these sit in 15771-15775, a range no
 * other broker of this tool uses.
 */
function ports() {
  return {
    amqp: { port: envPort("RABBITMQ_PORT", 15772), variable: "RABBITMQ_PORT", what: "AMQP" },
    tls: {
      port: envPort("RABBITMQ_TLS_PORT", 15771),
      variable: "RABBITMQ_TLS_PORT",
      what: "AMQPS",
    },
    management: {
      port: envPort("RABBITMQ_MANAGEMENT_PORT", 15773),
      variable: "RABBITMQ_MANAGEMENT_PORT",
      what: "management API",
    },
    dist: {
      port: envPort("RABBITMQ_DIST_PORT", 15774),
      variable: "RABBITMQ_DIST_PORT",
      what: "Erlang distribution",
    },
    epmd: {
      port: envPort("RABBITMQ_EPMD_PORT", 15775),
      variable: "RABBITMQ_EPMD_PORT",
      what: "epmd",
    },
  };
}

function paths() {
  const dir = stateDir("rabbitmq");
  return {
    dir,
    /** The Erlang cookie lives in $HOME: ours, so no other node's cookie is read or written. */
    home: stateDir("rabbitmq", "home"),
    data: stateDir("rabbitmq", "data"),
    logs: stateDir("rabbitmq", "log"),
    config: join(dir, "rabbitmq.conf"),
    plugins: join(dir, "enabled_plugins"),
    /** The start script's pid (its process group holds the Erlang VM), written by startDetached. */
    pidFile: join(dir, "rabbitmq.pid"),
    /** The Erlang VM's own pid, written by RabbitMQ once it runs. */
    beamPidFile: join(dir, "beam.pid"),
    epmdPidFile: join(dir, "epmd.pid"),
    log: join(dir, "rabbitmq.out"),
    epmdLog: join(dir, "epmd.log"),
    fingerprint: join(dir, "config.sha256"),
    lock: join(dir, "up.lock"),
    tlsDir: stateDir("rabbitmq", "tls-certs"),
  };
}

/** The user's password, made once per machine and kept (mode 600); it guards loopback ports only. */
export function secrets() {
  const file = join(stateDir("rabbitmq"), "secrets.json");
  if (!existsSync(file)) {
    writeFileSync(file, JSON.stringify({ password: randomBytes(12).toString("hex") }), {
      mode: 0o600,
    });
  }
  return /** @type {{ password: string }} */ (JSON.parse(readFileSync(file, "utf8")));
}

const tlsFiles = () => testCertificates(paths().tlsDir);

/** rabbitmq.conf: listeners on loopback only, the user, TLS, the management API, the logs. */
function configText() {
  const p = ports();
  const f = tlsFiles();
  return `${[
    `listeners.tcp.default = ${HOST}:${p.amqp.port}`,
    `listeners.ssl.default = ${HOST}:${p.tls.port}`,
    `ssl_options.cacertfile = ${f.ca}`,
    `ssl_options.certfile = ${f.cert}`,
    `ssl_options.keyfile = ${f.key}`,
    // A client may present a certificate (signed by the CA) or none; its password still decides.
    "ssl_options.verify = verify_peer",
    "ssl_options.fail_if_no_peer_cert = false",
    `management.tcp.ip = ${HOST}`,
    `management.tcp.port = ${p.management.port}`,
    // Made at the first boot on empty data only (and then kept in the data folder).
    `default_user = ${USER}`,
    `default_pass = ${secrets().password}`,
    "default_user_tags.administrator = true",
    "loopback_users = none",
    "log.console = false",
    "log.file.level = info",
  ].join("\n")}\n`;
}

const fingerprintOf = (/** @type {string} */ text) =>
  createHash("sha256").update(text).digest("hex");

/** The environment Debian's scripts read: every path and port ours, none of /etc or /var. */
function serverEnv() {
  const p = paths();
  const pp = ports();
  return {
    ...process.env,
    HOME: p.home,
    RABBITMQ_NODENAME: NODE,
    RABBITMQ_CONF_ENV_FILE: join(p.dir, "no-rabbitmq-env.conf"),
    RABBITMQ_CONFIG_FILE: p.config,
    RABBITMQ_ADVANCED_CONFIG_FILE: join(p.dir, "no-advanced.config"),
    RABBITMQ_ENABLED_PLUGINS_FILE: p.plugins,
    RABBITMQ_MNESIA_BASE: p.data,
    RABBITMQ_LOG_BASE: p.logs,
    RABBITMQ_PID_FILE: p.beamPidFile,
    RABBITMQ_DIST_PORT: String(pp.dist.port),
    ERL_EPMD_PORT: String(pp.epmd.port),
    // The distribution port would listen on every interface otherwise.
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: "-kernel inet_dist_use_interface {127,0,0,1}",
  };
}

/** Installs Debian's rabbitmq-server when missing (as root), its service kept from starting. */
export async function ensureInstalled(/** @type {(line: string) => void} */ log) {
  if (existsSync(join(SBIN, "rabbitmq-server"))) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      "rabbitmq-server is not installed: run `sudo apt-get install -y rabbitmq-server` (Debian's 3.10; its service may be stopped and disabled, these tools start their own node) and retry",
    );
  }
  log("installing Debian's rabbitmq-server (apt-get), its system service kept from starting");
  const release = holdServiceStarts();
  try {
    await run("apt-get", ["update", "-qq"]);
    await run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "rabbitmq-server"], {
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  } finally {
    release();
  }
}

/** The Erlang VM's pid, when it runs in the process group of the start script `up` recorded. */
function ourBeam() {
  const p = paths();
  const script = runningPid(p.pidFile);
  const beam = runningPid(p.beamPidFile);
  if (script === undefined || beam === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${beam}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[2]) === script ? beam : undefined;
  } catch {
    return undefined;
  }
}

const auth = () => `Basic ${Buffer.from(`${USER}:${secrets().password}`).toString("base64")}`;

/**
 * The management API's answer for a path, as JSON.
 * @param {string} path e.g. `/api/queues/%2F/orders`
 * @param {RequestInit} [init]
 */
export async function management(path, init = {}) {
  const response = await fetch(`http://${HOST}:${ports().management.port}${path}`, {
    ...init,
    headers: { authorization: auth(), "content-type": "application/json", ...init.headers },
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok)
    throw new Error(`management API ${path}: ${response.status} ${await response.text()}`);
  return response.status === 204 ? undefined : response.json();
}

/**
 * Whether the node `up` started serves: the management API names our node and its VM's pid, and a
 * real AMQP connection (plain and TLS, with the user's password) opens a channel.
 */
async function serves() {
  const beam = ourBeam();
  if (beam === undefined) return false;
  const node = /** @type {{ os_pid?: string, running?: boolean }} */ (
    await management(`/api/nodes/${encodeURIComponent(NODE)}`)
  );
  if (node.running !== true || Number(node.os_pid) !== beam) return false;
  for (const url of [amqpUrl(), amqpsUrl()]) {
    const connection = await amqp.connect(url, {
      ca: [readFileSync(tlsFiles().ca)],
      timeout: 3000,
    });
    try {
      await (await connection.createChannel()).close();
    } finally {
      await connection.close().catch(() => {});
    }
  }
  return true;
}

/** Refuses, naming the variable, when something `up` did not start holds one of the ports. */
async function refuseForeignPorts(/** @type {boolean} */ epmdOurs) {
  for (const [key, port] of Object.entries(ports())) {
    if (key === "epmd" && epmdOurs) continue;
    if (await portOpen(port.port)) {
      throw new Error(
        `rabbitmq: port ${port.port} (${port.what}) is held by a process these tools did not start; stop it or set ${port.variable} to a free port`,
      );
    }
  }
}

/** Our own epmd on its port, so the node registers with no other. */
async function ensureEpmd() {
  const p = paths();
  if (runningPid(p.epmdPidFile) !== undefined) return;
  const port = ports().epmd.port;
  writeFileSync(p.epmdLog, "");
  const pid = startDetached({
    command: "epmd",
    args: ["-port", String(port), "-address", HOST],
    logFile: p.epmdLog,
    pidFile: p.epmdPidFile,
  });
  await waitFor(() => portOpen(port), { timeoutMs: 10_000, pid, what: `epmd on ${HOST}:${port}` });
}

/** Starts the node on its data; resolves once it serves, or throws with the log's tail. */
async function launch() {
  const p = paths();
  await ensureEpmd();
  await ensureTestCertificates(p.tlsDir, "ruststream test CA");
  const config = configText();
  writeFileSync(p.config, config);
  writeFileSync(p.plugins, "[rabbitmq_management,rabbitmq_consistent_hash_exchange].\n");
  rmSync(p.beamPidFile, { force: true });
  writeFileSync(p.log, "");
  const started = startDetached({
    command: join(SBIN, "rabbitmq-server"),
    args: [],
    cwd: p.dir,
    env: serverEnv(),
    logFile: p.log,
    pidFile: p.pidFile,
  });
  try {
    await waitFor(serves, {
      timeoutMs: START_BUDGET_MS,
      pid: started,
      intervalMs: 500,
      what: `rabbitmq on ${HOST}:${ports().amqp.port}`,
    });
  } catch (error) {
    if (isAlive(started)) await stopNode(true);
    const nodeLog = join(p.logs, `${NODE}.log`);
    throw new Error(
      `${/** @type {Error} */ (error).message}\n--- ${p.log} ---\n${tail(p.log, 15)}\n--- ${nodeLog} ---\n${tail(nodeLog, 25)}`,
    );
  }
  writeFileSync(p.fingerprint, fingerprintOf(config));
}

/**
 * Stops the node: SIGTERM to the start script, which stops the VM cleanly (queues closed, indexes
 * written); with `hard`, SIGKILL to its whole process group, as a crash would.
 * @param {boolean} hard
 */
async function stopNode(hard) {
  const p = paths();
  const script = runningPid(p.pidFile);
  if (hard && script !== undefined) {
    try {
      process.kill(-script, "SIGKILL");
    } catch {}
  }
  const beam = runningPid(p.beamPidFile);
  const stopped = await stopByPidFile(p.pidFile, 60_000);
  // The VM outlives the script only when the script was killed before it passed the signal on.
  if (beam !== undefined && isAlive(beam)) {
    process.kill(beam, "SIGKILL");
    while (isAlive(beam)) await sleep(50);
  }
  rmSync(p.beamPidFile, { force: true });
  await waitFor(async () => !(await portOpen(ports().amqp.port)), {
    timeoutMs: 10_000,
    intervalMs: 50,
    what: `rabbitmq releasing port ${ports().amqp.port}`,
  });
  return stopped;
}

/** @param {(line: string) => void} log */
export async function up(log) {
  const begin = Date.now();
  await ensureInstalled(log);
  const p = paths();
  return withLock(p.lock, { what: "rabbitmq", timeoutMs: START_BUDGET_MS + 60_000 }, async () => {
    if (ourBeam() !== undefined && (await serves().catch(() => false))) {
      const recorded = existsSync(p.fingerprint) ? readFileSync(p.fingerprint, "utf8") : "";
      if (recorded === fingerprintOf(configText()))
        return { already: true, address: amqpUrlShown(), ms: Date.now() - begin };
      log("[brokers] rabbitmq runs on an older configuration: restarting it on the current one");
      await stopNode(false);
    } else if (runningPid(p.pidFile) !== undefined) {
      await stopNode(false);
    }
    await refuseForeignPorts(runningPid(p.epmdPidFile) !== undefined);
    await launch();
    return { already: false, address: amqpUrlShown(), ms: Date.now() - begin };
  });
}

/** @param {(line: string) => void} _log */
export async function down(_log) {
  const p = paths();
  const stopped = await stopNode(false);
  const epmd = await stopByPidFile(p.epmdPidFile);
  return stopped || epmd;
}

/**
 * Stops the node (SIGKILL with `hard`, as a crash would) and starts it again on its data: durable
 * queues and their persistent messages survive. `whileDown` runs once it is down and before it
 * starts again, which it does whatever `whileDown` does (a throw is rethrown after the start).
 * Under `up`'s lock, so a global setup meanwhile waits instead of starting a second node.
 * @param {{ hard?: boolean, whileDown?: () => Promise<void> }} [options]
 */
export async function restart(options = {}) {
  const p = paths();
  await withLock(p.lock, { what: "rabbitmq", timeoutMs: START_BUDGET_MS + 60_000 }, async () => {
    await stopNode(options.hard === true);
    /** @type {{ error: unknown } | undefined} */
    let failed;
    await options.whileDown?.().catch((error) => {
      failed = { error };
    });
    await launch();
    if (failed !== undefined) throw failed.error;
  });
}

/**
 * Runs `fn` with the node to itself: a test that restarts it holds it for its whole body.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(fn) {
  return withLock(
    join(paths().dir, "exclusive.lock"),
    { what: "rabbitmq, held by a test that restarts it", timeoutMs: 10 * 60_000 },
    fn,
  );
}

export async function status() {
  const beam = ourBeam();
  const running = beam !== undefined && (await serves().catch(() => false));
  return [
    {
      running,
      address: amqpUrlShown(),
      ...(running && beam !== undefined ? { pid: beam, rssMiB: rssMiB(beam) } : {}),
    },
  ];
}

const amqpUrl = () => `amqp://${USER}:${secrets().password}@${HOST}:${ports().amqp.port}`;
const amqpsUrl = () => `amqps://${USER}:${secrets().password}@${HOST}:${ports().tls.port}`;
const amqpUrlShown = () => `amqp://${HOST}:${ports().amqp.port}`;

export function env() {
  return {
    RABBITMQ_URL: amqpUrl(),
    RABBITMQ_TLS_URL: amqpsUrl(),
    RABBITMQ_TLS_CA: tlsFiles().ca,
    RABBITMQ_MANAGEMENT_URL: `http://${HOST}:${ports().management.port}`,
    RABBITMQ_USERNAME: USER,
    RABBITMQ_PASSWORD: secrets().password,
  };
}
