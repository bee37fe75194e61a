// @ts-check
// A three-node RabbitMQ cluster (nodes 1-3, one Erlang cookie, one epmd of its own) for failover
// tests, run like the one node (rabbitmqNode.mjs: Debian's scripts by hand, every path and port
// ours) on ports of its own, never the one node's. Not part of `up all`: the test that needs it
// starts it (up), kills and starts nodes (killNode, startNode) and stops it (down).
// A cluster none of whose nodes runs starts from empty data: node 1 boots alone, nodes 2 and 3 boot
// and join it (`rabbitmqctl stop_app`, `reset`, `join_cluster`, `start_app`), as an operator joins
// nodes. It holds only test queues, and a test that died mid-kill leaves nothing half-replicated for
// the next. A killed node starts again on its data and rejoins by itself.
// State lives in stateDir("rabbitmq-cluster"): home/ (the cookie), node-<i>/ (data/, log/,
// rabbitmq.conf, pid files), epmd.pid, up.lock and exclusive.lock.
import { randomBytes } from "node:crypto";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  isAlive,
  portOpen,
  rssMiB,
  runningPid,
  stopByPidFile,
  waitFor,
  withLock,
} from "./process.mjs";
import {
  amqpUrlAt,
  beamOf,
  commonConfigLines,
  ensureEpmd,
  ensureInstalled,
  HOST,
  launchNode,
  logIn,
  logTails,
  managementAt,
  nodeFiles,
  nodeRuns,
  runCli,
  stopNode,
} from "./rabbitmqNode.mjs";
import { envPort, stateDir } from "./state.mjs";

export const name = "rabbitmq-cluster";

/** The node numbers, also their order in the port ranges. */
export const NODES = /** @type {const} */ ([1, 2, 3]);

/**
 * Three Erlang VMs booting at once on 2 busy cores take 20-60 s; the joins (four CLI runs per
 * joining node, each an Erlang VM of its own) add 20-40 s.
 */
const START_BUDGET_MS = 240_000;

/**
 * The cluster's ports, each from its variable: AMQP 15781-15783, management 15784-15786, Erlang
 * distribution 15787-15789, its epmd 15790, and 15791-15800 for the CLI's own distribution port
 * (rabbitmqctl is an Erlang node too). Beside the one node's 15771-15775, apart from them.
 */
function clusterPorts() {
  return {
    amqp: envPort("RABBITMQ_CLUSTER_PORT", 15781),
    management: envPort("RABBITMQ_CLUSTER_MANAGEMENT_PORT", 15784),
    dist: envPort("RABBITMQ_CLUSTER_DIST_PORT", 15787),
    epmd: envPort("RABBITMQ_CLUSTER_EPMD_PORT", 15790),
    ctl: envPort("RABBITMQ_CLUSTER_CTL_PORT", 15791),
  };
}

/**
 * A node's Erlang name: stable across its restarts, as the cluster (and a quorum queue's Raft
 * members) knows a node by it.
 * @param {number} i
 */
export const nodeName = (i) => `ruststream-n${i}@localhost`;

const home = () => stateDir("rabbitmq-cluster", "home");

/**
 * Node `i`: its name, folder and ports.
 * @param {number} i
 * @returns {import("./rabbitmqNode.mjs").RabbitNode}
 */
function node(i) {
  const p = clusterPorts();
  return {
    node: nodeName(i),
    dir: stateDir("rabbitmq-cluster", `node-${i}`),
    home: home(),
    data: stateDir("rabbitmq-cluster", `node-${i}`, "data"),
    logs: stateDir("rabbitmq-cluster", `node-${i}`, "log"),
    amqpPort: p.amqp + i - 1,
    managementPort: p.management + i - 1,
    distPort: p.dist + i - 1,
    epmdPort: p.epmd,
  };
}

const epmdFiles = () => ({
  port: clusterPorts().epmd,
  pidFile: join(stateDir("rabbitmq-cluster"), "epmd.pid"),
  logFile: join(stateDir("rabbitmq-cluster"), "epmd.log"),
});

/** One cookie for the three nodes and the CLI, made before any of them starts. */
function ensureCookie() {
  const file = join(home(), ".erlang.cookie");
  if (!existsSync(file)) {
    writeFileSync(file, randomBytes(20).toString("hex").toUpperCase(), { mode: 0o400 });
  }
}

/** rabbitmq.conf of node `i`: plain AMQP on loopback, then what every node has. @param {number} i */
function configText(i) {
  const n = node(i);
  return `${[`listeners.tcp.default = ${HOST}:${n.amqpPort}`, ...commonConfigLines(n.managementPort)].join("\n")}\n`;
}

/**
 * `rabbitmqctl -n <node i> ...args`: the CLI reaches the node through the cluster's epmd with the
 * cluster's cookie, on a distribution port of its own range.
 * @param {number} i
 * @param {string[]} args
 */
function ctl(i, args) {
  const first = clusterPorts().ctl;
  return runCli(node(i), "rabbitmqctl", args, { min: first, max: first + 9 });
}

/**
 * Whether node `i` serves as part of the whole cluster: its management API names it with the VM's
 * pid `up` started and lists all three nodes running, and the user logs in on its AMQP port.
 * @param {number} i
 */
async function serving(i) {
  const n = node(i);
  if (!(await nodeRuns(n))) return false;
  const nodes = /** @type {Array<{ name: string, running: boolean }>} */ (
    await managementAt(n.managementPort, "/api/nodes")
  );
  const running = new Set(nodes.filter((x) => x.running).map((x) => x.name));
  if (!NODES.every((j) => running.has(nodeName(j)))) return false;
  await logIn(amqpUrlAt(n.amqpPort));
  return true;
}

/** @param {number} i */
const running = (i) => beamOf(node(i)) !== undefined;

/**
 * Starts node `i` on its data (which a fresh cluster has emptied first); answers the start script's
 * pid, once the node itself runs (not yet as part of the cluster).
 * @param {number} i
 */
async function launch(i) {
  const n = node(i);
  for (const [port, variable] of /** @type {const} */ ([
    [n.amqpPort, "RABBITMQ_CLUSTER_PORT"],
    [n.managementPort, "RABBITMQ_CLUSTER_MANAGEMENT_PORT"],
    [n.distPort, "RABBITMQ_CLUSTER_DIST_PORT"],
  ])) {
    if (await portOpen(port)) {
      throw new Error(
        `rabbitmq-cluster node ${i}: port ${port} is held by a process these tools did not start; stop it or set ${variable} to the first of three free ports`,
      );
    }
  }
  return launchNode(n, configText(i));
}

/**
 * Waits until `check` holds, throwing with the nodes' log tails when it does not in time.
 * @param {() => Promise<boolean>} check
 * @param {string} what
 * @param {number} [pid] a start script that must stay alive meanwhile
 */
async function waitOrExplain(check, what, pid) {
  try {
    await waitFor(check, {
      timeoutMs: START_BUDGET_MS,
      intervalMs: 500,
      what,
      ...(pid === undefined ? {} : { pid }),
    });
  } catch (error) {
    const logs = NODES.map((i) => `--- node ${i} ---\n${logTails(node(i))}`).join("\n");
    throw new Error(`${/** @type {Error} */ (error).message}\n${logs}`);
  }
}

/** Waits until every node serves as part of the cluster; on failure, the logs' tails. */
async function waitWhole() {
  await waitOrExplain(
    async () => (await Promise.all(NODES.map(serving))).every(Boolean),
    "rabbitmq-cluster: three nodes running in one cluster, the user logging in on each",
  );
}

/** A cluster made afresh: node 1 alone, then 2 and 3 started and joined to it one by one. */
async function form() {
  for (const i of NODES) rmSync(node(i).dir, { recursive: true, force: true });
  const pids = new Map(NODES.map((i) => [i, 0]));
  for (const i of NODES) pids.set(i, await launch(i));
  for (const i of NODES) {
    await waitOrExplain(() => nodeRuns(node(i)), `rabbitmq-cluster node ${i} booting`, pids.get(i));
  }
  for (const i of NODES.slice(1)) {
    await ctl(i, ["stop_app"]);
    await ctl(i, ["reset"]);
    await ctl(i, ["join_cluster", nodeName(1)]);
    await ctl(i, ["start_app"]);
  }
}

const upLock = () => join(stateDir("rabbitmq-cluster"), "up.lock");

/** @param {(line: string) => void} log */
export async function up(log) {
  const begin = Date.now();
  await ensureInstalled(log);
  let already = true;
  await withLock(
    upLock(),
    { what: "rabbitmq-cluster", timeoutMs: START_BUDGET_MS + 60_000 },
    async () => {
      if (NODES.every(running) && (await Promise.all(NODES.map(serving))).every(Boolean)) return;
      already = false;
      ensureCookie();
      await ensureEpmd(epmdFiles());
      if (NODES.some(running)) {
        for (const i of NODES) if (!running(i)) await launch(i);
      } else {
        await form();
      }
      await waitWhole();
      log(`[brokers] rabbitmq-cluster on ${shown()}`);
    },
  );
  return { already, address: shown(), ms: Date.now() - begin };
}

/** @param {(line: string) => void} _log */
export async function down(_log) {
  let stopped = false;
  for (const i of NODES) if (await stopNode(node(i), false)) stopped = true;
  if (await stopByPidFile(epmdFiles().pidFile)) stopped = true;
  return stopped;
}

/**
 * SIGKILLs node `i` (its start script's process group, the VM in it), as a crash would; resolves
 * once it is gone and its AMQP port released.
 * @param {number} i
 */
export async function killNode(i) {
  const beam = beamOf(node(i));
  await stopNode(node(i), true);
  if (beam !== undefined) {
    await waitFor(async () => !isAlive(beam), {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: `rabbitmq-cluster node ${i} dying`,
    });
  }
}

/**
 * Starts node `i` again on its data; resolves once all three serve as one cluster.
 * @param {number} i
 */
export async function startNode(i) {
  await withLock(
    upLock(),
    { what: "rabbitmq-cluster", timeoutMs: START_BUDGET_MS + 60_000 },
    async () => {
      if (runningPid(nodeFiles(node(i)).pidFile) === undefined) await launch(i);
      await waitWhole();
    },
  );
}

/**
 * SIGKILLs all three nodes at once, as a crash of the whole cluster would, and starts them again on
 * their data, side by side (a node of a cluster waits at boot for the others it knows); resolves
 * once all three run as one cluster. Not `down` then `up`: `up` makes a cluster none of whose nodes
 * runs afresh, and this keeps every queue and message.
 */
export async function restartAll() {
  await withLock(
    upLock(),
    { what: "rabbitmq-cluster", timeoutMs: START_BUDGET_MS + 60_000 },
    async () => {
      const down = NODES.filter((i) => !running(i));
      if (down.length > 0) {
        throw new Error(
          `rabbitmq-cluster: node ${down.join(", ")} is not running; start the cluster with up() first`,
        );
      }
      await Promise.all(NODES.map((i) => stopNode(node(i), true)));
      for (const i of NODES) await launch(i);
      await waitWhole();
    },
  );
}

/**
 * Runs `fn` with the cluster to itself: a test that kills its nodes holds it for its whole body.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(fn) {
  return withLock(
    join(stateDir("rabbitmq-cluster"), "exclusive.lock"),
    { what: "rabbitmq-cluster, held by a test that kills its nodes", timeoutMs: 10 * 60_000 },
    fn,
  );
}

/** The three AMQP URLs (the user and password in them), one per node. */
export const urls = () => NODES.map((i) => amqpUrlAt(node(i).amqpPort));

const shown = () => NODES.map((i) => `amqp://${HOST}:${node(i).amqpPort}`).join(",");

/**
 * The management API's answer for a path on node `i`, as JSON.
 * @param {number} i
 * @param {string} path
 * @param {RequestInit} [init]
 */
export function management(i, path, init = {}) {
  return managementAt(node(i).managementPort, path, init);
}

/**
 * The node (1-3) an Erlang node name names (a quorum queue's leader, as the management API gives it).
 * @param {string} erlangName
 */
export function nodeOf(erlangName) {
  const i = NODES.find((n) => nodeName(n) === erlangName);
  if (i === undefined) throw new Error(`"${erlangName}" is no node of rabbitmq-cluster`);
  return i;
}

export async function status() {
  const result = [];
  for (const i of NODES) {
    const beam = beamOf(node(i));
    const ok = beam !== undefined && (await serving(i).catch(() => false));
    result.push({
      running: ok,
      address: `node ${i} ${HOST}:${node(i).amqpPort}`,
      ...(ok && beam !== undefined ? { pid: beam, rssMiB: rssMiB(beam) } : {}),
    });
  }
  return result;
}

export function env() {
  return {
    RABBITMQ_CLUSTER_URLS: urls().join(","),
    RABBITMQ_CLUSTER_MANAGEMENT_URLS: NODES.map(
      (i) => `http://${HOST}:${node(i).managementPort}`,
    ).join(","),
  };
}
