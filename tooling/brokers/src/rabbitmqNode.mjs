// @ts-check
// What every RabbitMQ node these tools start has in common, the one node (rabbitmq.mjs) and the
// three of the cluster (rabbitmqCluster.mjs): Debian's rabbitmq-server (3.10, Erlang 25) run by hand
// from its own scripts, never the package's system service, never its /var/lib/rabbitmq or
// /etc/rabbitmq; every path and port ours; an epmd of our own; the user and its password, made once
// per machine; the start, the readiness of one node, the stop (clean, or SIGKILL as a crash would).
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import amqp from "amqplib";
import { holdServiceStarts } from "../../setup/noServiceStarts.mjs";
import {
  isAlive,
  portOpen,
  run,
  runningPid,
  sleep,
  startDetached,
  stopByPidFile,
  tail,
  waitFor,
} from "./process.mjs";
import { stateDir } from "./state.mjs";

export const HOST = "127.0.0.1";
export const USER = "ruststream";
/** Debian's scripts themselves, not the wrappers in /usr/sbin that switch to the rabbitmq user. */
export const SBIN = "/usr/lib/rabbitmq/bin";

/**
 * One node: its Erlang node name, its folder (config, logs, data, pid files) and its ports. `home`
 * holds the Erlang cookie: ours, so no other node's cookie is read or written.
 * @typedef {{
 *   node: string,
 *   dir: string,
 *   home: string,
 *   data: string,
 *   logs: string,
 *   amqpPort: number,
 *   managementPort: number,
 *   distPort: number,
 *   epmdPort: number,
 * }} RabbitNode
 */

/** The files of a node in its folder. @param {RabbitNode} n */
export function nodeFiles(n) {
  return {
    config: join(n.dir, "rabbitmq.conf"),
    plugins: join(n.dir, "enabled_plugins"),
    /** The start script's pid (its process group holds the Erlang VM), written by startDetached. */
    pidFile: join(n.dir, "rabbitmq.pid"),
    /** The Erlang VM's own pid, written by RabbitMQ once it runs. */
    beamPidFile: join(n.dir, "beam.pid"),
    log: join(n.dir, "rabbitmq.out"),
    nodeLog: join(n.logs, `${n.node}.log`),
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

/**
 * rabbitmq.conf's lines after the listeners: the management API on loopback, the user, the logs.
 * @param {number} managementPort
 */
export function commonConfigLines(managementPort) {
  return [
    `management.tcp.ip = ${HOST}`,
    `management.tcp.port = ${managementPort}`,
    // Made at the first boot on empty data only (and then kept in the data folder).
    `default_user = ${USER}`,
    `default_pass = ${secrets().password}`,
    "default_user_tags.administrator = true",
    "loopback_users = none",
    "log.console = false",
    "log.file.level = info",
  ];
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

/** The environment Debian's scripts read: every path and port ours, none of /etc or /var. */
function serverEnv(/** @type {RabbitNode} */ n) {
  const f = nodeFiles(n);
  return {
    ...process.env,
    HOME: n.home,
    RABBITMQ_NODENAME: n.node,
    RABBITMQ_CONF_ENV_FILE: join(n.dir, "no-rabbitmq-env.conf"),
    RABBITMQ_CONFIG_FILE: f.config,
    RABBITMQ_ADVANCED_CONFIG_FILE: join(n.dir, "no-advanced.config"),
    RABBITMQ_ENABLED_PLUGINS_FILE: f.plugins,
    RABBITMQ_MNESIA_BASE: n.data,
    RABBITMQ_LOG_BASE: n.logs,
    RABBITMQ_PID_FILE: f.beamPidFile,
    RABBITMQ_DIST_PORT: String(n.distPort),
    ERL_EPMD_PORT: String(n.epmdPort),
    // The distribution port would listen on every interface otherwise.
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: "-kernel inet_dist_use_interface {127,0,0,1}",
  };
}

/** The Erlang VM's pid, when it runs in the process group of the start script `up` recorded. */
export function beamOf(/** @type {RabbitNode} */ n) {
  const f = nodeFiles(n);
  const script = runningPid(f.pidFile);
  const beam = runningPid(f.beamPidFile);
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
 * A node's management API's answer for a path, as JSON (undefined for an empty answer).
 * @param {number} port the node's management port
 * @param {string} path e.g. `/api/queues/%2F/orders`
 * @param {RequestInit} [init]
 */
export async function managementAt(port, path, init = {}) {
  const response = await fetch(`http://${HOST}:${port}${path}`, {
    ...init,
    headers: { authorization: auth(), "content-type": "application/json", ...init.headers },
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok)
    throw new Error(`management API ${path}: ${response.status} ${await response.text()}`);
  // A PUT that creates answers 201 with no body, a DELETE 204.
  const text = await response.text();
  return text === "" ? undefined : JSON.parse(text);
}

/** The node's AMQP URL, the user and password in it. @param {number} port */
export const amqpUrlAt = (port) => `amqp://${USER}:${secrets().password}@${HOST}:${port}`;

/**
 * Whether the node's VM (started by `up`) runs and its management API names it with that pid.
 * @param {RabbitNode} n
 */
export async function nodeRuns(n) {
  const beam = beamOf(n);
  if (beam === undefined) return false;
  const node = /** @type {{ os_pid?: string, running?: boolean }} */ (
    await managementAt(n.managementPort, `/api/nodes/${encodeURIComponent(n.node)}`)
  );
  return node.running === true && Number(node.os_pid) === beam;
}

/**
 * Opens a real AMQP connection with the user's password and a channel on it, then closes both;
 * throws when the node refuses.
 * @param {string} url
 * @param {Record<string, unknown>} [socket]
 */
export async function logIn(url, socket = {}) {
  const connection = await amqp.connect(url, { timeout: 3000, ...socket });
  try {
    await (await connection.createChannel()).close();
  } finally {
    await connection.close().catch(() => {});
  }
}

/**
 * An epmd of our own on its port, so our nodes register with no other.
 * @param {{ port: number, pidFile: string, logFile: string }} epmd
 */
export async function ensureEpmd({ port, pidFile, logFile }) {
  if (runningPid(pidFile) !== undefined) return;
  writeFileSync(logFile, "");
  const pid = startDetached({
    command: "epmd",
    args: ["-port", String(port), "-address", HOST],
    logFile,
    pidFile,
  });
  await waitFor(() => portOpen(port), { timeoutMs: 10_000, pid, what: `epmd on ${HOST}:${port}` });
}

/** The plugins every node has. */
const PLUGINS = ["rabbitmq_management", "rabbitmq_consistent_hash_exchange"];

/**
 * Writes the node's configuration and plugins and starts its VM on its data; answers the start
 * script's pid (the caller waits for readiness).
 * @param {RabbitNode} n
 * @param {string} config rabbitmq.conf's text
 * @param {readonly string[]} [plugins] plugins beyond those every node has
 */
export function launchNode(n, config, plugins = []) {
  const f = nodeFiles(n);
  writeFileSync(f.config, config);
  writeFileSync(f.plugins, `[${[...PLUGINS, ...plugins].join(",")}].\n`);
  rmSync(f.beamPidFile, { force: true });
  writeFileSync(f.log, "");
  return startDetached({
    command: join(SBIN, "rabbitmq-server"),
    args: [],
    cwd: n.dir,
    env: serverEnv(n),
    logFile: f.log,
    pidFile: f.pidFile,
  });
}

/**
 * Runs one of RabbitMQ's CLI tools (`rabbitmqctl`, `rabbitmq-plugins`) against node `n`: it reaches
 * the node through the node's epmd with the node's cookie, its own distribution port (the CLI is an
 * Erlang node too) taken from `ctlPorts`. Resolves with its output.
 * @param {RabbitNode} n
 * @param {"rabbitmqctl" | "rabbitmq-plugins"} tool
 * @param {string[]} args
 * @param {{ min: number, max: number }} ctlPorts
 */
export function runCli(n, tool, args, ctlPorts) {
  return run(join(SBIN, tool), ["-n", n.node, ...args], {
    env: {
      ...process.env,
      HOME: n.home,
      ERL_EPMD_PORT: String(n.epmdPort),
      RABBITMQ_CONF_ENV_FILE: join(n.dir, "no-rabbitmq-env.conf"),
      RABBITMQ_ENABLED_PLUGINS_FILE: nodeFiles(n).plugins,
      RABBITMQ_CTL_DIST_PORT_MIN: String(ctlPorts.min),
      RABBITMQ_CTL_DIST_PORT_MAX: String(ctlPorts.max),
    },
  });
}

/** The tails of the node's start log and its own log, for a failed start. @param {RabbitNode} n */
export function logTails(n) {
  const f = nodeFiles(n);
  return `--- ${f.log} ---\n${tail(f.log, 15)}\n--- ${f.nodeLog} ---\n${tail(f.nodeLog, 25)}`;
}

/**
 * Stops the node: SIGTERM to the start script, which stops the VM cleanly (queues closed, indexes
 * written); with `hard`, SIGKILL to its whole process group, as a crash would. Resolves once its
 * AMQP port is released; answers whether something was running.
 * @param {RabbitNode} n
 * @param {boolean} hard
 */
export async function stopNode(n, hard) {
  const f = nodeFiles(n);
  const script = runningPid(f.pidFile);
  if (hard && script !== undefined) {
    try {
      process.kill(-script, "SIGKILL");
    } catch {}
  }
  const beam = runningPid(f.beamPidFile);
  const stopped = await stopByPidFile(f.pidFile, 60_000);
  // The VM outlives the script only when the script was killed before it passed the signal on.
  if (beam !== undefined && isAlive(beam)) {
    process.kill(beam, "SIGKILL");
    while (isAlive(beam)) await sleep(50);
  }
  rmSync(f.beamPidFile, { force: true });
  await waitFor(async () => !(await portOpen(n.amqpPort)), {
    timeoutMs: 10_000,
    intervalMs: 50,
    what: `rabbitmq ${n.node} releasing port ${n.amqpPort}`,
  });
  return stopped;
}
