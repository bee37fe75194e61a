// @ts-check
// A three-node NATS JetStream cluster (nodes 1-3, routes between them, JetStream on file storage)
// for failover tests, from the same nats-server binary as the single servers (natsServer.mjs), on
// ports of its own. Not part of `up all`: the test that needs it starts it (up), kills and starts
// nodes (killNode, startNode) and stops it (down).
// State lives in stateDir("nats-cluster"): node-<i>/ (data/, nats.conf, nats.log, nats.pid),
// up.lock and exclusive.lock. A cluster none of whose nodes runs starts from empty data: it holds
// only test streams, and a test that died mid-kill leaves nothing half-replicated for the next.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serverInfo } from "./nats.mjs";
import { ensureServer } from "./natsServer.mjs";
import {
  isAlive,
  portOpen,
  rssMiB,
  runningPid,
  startDetached,
  stopByPidFile,
  tail,
  waitFor,
  withLock,
} from "./process.mjs";
import { envPort, stateDir } from "./state.mjs";

export const name = "nats-cluster";

/** The node numbers, also their order in the port ranges. */
export const NODES = /** @type {const} */ ([1, 2, 3]);

const HOST = "127.0.0.1";
const START_BUDGET_MS = 60_000;

/** @param {number} i */
function ports(i) {
  return {
    client: envPort("NATS_CLUSTER_PORT", 14231) + i - 1,
    route: envPort("NATS_CLUSTER_ROUTE_PORT", 16231) + i - 1,
    monitor: envPort("NATS_CLUSTER_MONITOR_PORT", 18231) + i - 1,
  };
}

/**
 * A node's server name: stable across its restarts, as JetStream's clustering (its Raft groups)
 * knows a node by it.
 * @param {number} i
 */
export const serverName = (i) => `ruststream-cluster-n${i}`;

/** @param {number} i */
function files(i) {
  const dir = stateDir("nats-cluster", `node-${i}`);
  return {
    dir,
    data: join(dir, "data"),
    config: join(dir, "nats.conf"),
    log: join(dir, "nats.log"),
    pidFile: join(dir, "nats.pid"),
  };
}

const q = (/** @type {string} */ value) => JSON.stringify(value);

/** @param {number} i */
function config(i) {
  const p = ports(i);
  const f = files(i);
  const routes = NODES.filter((n) => n !== i).map((n) =>
    q(`nats-route://${HOST}:${ports(n).route}`),
  );
  return `# Written by tooling/brokers/src/natsCluster.mjs on every start; edit that file, not this one.
server_name: ${q(serverName(i))}
listen: ${q(`${HOST}:${p.client}`)}
http: ${q(`${HOST}:${p.monitor}`)}
jetstream { store_dir: ${q(f.data)}, max_memory_store: 134217728, max_file_store: 2147483648 }
cluster {
  name: "ruststream"
  listen: ${q(`${HOST}:${p.route}`)}
  routes: [ ${routes.join(", ")} ]
}
`;
}

/**
 * Whether node `i` serves as part of the cluster: its INFO names it, and its monitoring says
 * JetStream is ready (`/healthz`) and names a meta leader with all three peers known.
 * @param {number} i
 */
async function serving(i) {
  const info = await serverInfo(ports(i).client);
  if (info?.server_name !== serverName(i)) return false;
  const base = `http://${HOST}:${ports(i).monitor}`;
  const health = await fetch(`${base}/healthz`).catch(() => undefined);
  if (health?.ok !== true) return false;
  const jsz = await fetch(`${base}/jsz`)
    .then((r) => r.json())
    .catch(() => undefined);
  const meta =
    /** @type {{ meta_cluster?: { leader?: string, cluster_size?: number } } | undefined} */ (jsz)
      ?.meta_cluster;
  return typeof meta?.leader === "string" && meta.leader !== "" && meta.cluster_size === 3;
}

/** @param {number} i */
function running(i) {
  return runningPid(files(i).pidFile) !== undefined;
}

/**
 * Starts node `i` on its data (which a fresh cluster has emptied first).
 * @param {number} i
 * @param {string} binary
 */
async function launch(i, binary) {
  const f = files(i);
  const p = ports(i);
  for (const [port, variable] of /** @type {const} */ ([
    [p.client, "NATS_CLUSTER_PORT"],
    [p.route, "NATS_CLUSTER_ROUTE_PORT"],
    [p.monitor, "NATS_CLUSTER_MONITOR_PORT"],
  ])) {
    if (await portOpen(port)) {
      throw new Error(
        `nats-cluster node ${i}: port ${port} is held by a process these tools did not start; stop it or set ${variable} to the first of three free ports`,
      );
    }
  }
  writeFileSync(f.config, config(i));
  writeFileSync(f.log, "");
  return startDetached({
    command: binary,
    args: ["-c", f.config],
    logFile: f.log,
    pidFile: f.pidFile,
    cwd: f.dir,
  });
}

/** Waits until every node serves as part of the cluster; on failure, the logs' tails. */
async function waitWhole() {
  try {
    await waitFor(async () => (await Promise.all(NODES.map(serving))).every(Boolean), {
      timeoutMs: START_BUDGET_MS,
      what: "nats-cluster: three nodes with a JetStream meta leader",
    });
  } catch (error) {
    const logs = NODES.map((i) => `--- node ${i} ---\n${tail(files(i).log, 15)}`).join("\n");
    throw new Error(`${/** @type {Error} */ (error).message}\n${logs}`);
  }
}

const upLock = () => join(stateDir("nats-cluster"), "up.lock");

/** @param {(line: string) => void} log */
export async function up(log) {
  const begin = Date.now();
  const binary = await ensureServer(log);
  let already = true;
  await withLock(upLock(), { what: "nats-cluster", timeoutMs: 120_000 }, async () => {
    if ((await Promise.all(NODES.map(serving))).every(Boolean) && NODES.every(running)) return;
    already = false;
    if (!NODES.some(running)) {
      for (const i of NODES) rmSync(files(i).data, { recursive: true, force: true });
    }
    for (const i of NODES) if (!running(i)) await launch(i, binary);
    await waitWhole();
    log(`[brokers] nats-cluster on ${bootstrap()}`);
  });
  return { already, address: bootstrap(), ms: Date.now() - begin };
}

/** @param {(line: string) => void} _log */
export async function down(_log) {
  let stopped = false;
  for (const i of NODES) if (await stopByPidFile(files(i).pidFile)) stopped = true;
  return stopped;
}

/**
 * SIGKILLs node `i`, as a crash would; resolves once it is gone.
 * @param {number} i
 */
export async function killNode(i) {
  const pid = runningPid(files(i).pidFile);
  if (pid === undefined) return;
  process.kill(pid, "SIGKILL");
  await waitFor(async () => !isAlive(pid), {
    timeoutMs: 10_000,
    intervalMs: 20,
    what: `nats-cluster node ${i} dying`,
  });
}

/**
 * Starts node `i` again on its data; resolves once all three serve as one cluster.
 * @param {number} i
 */
export async function startNode(i) {
  const binary = await ensureServer(() => {});
  await withLock(upLock(), { what: "nats-cluster", timeoutMs: 120_000 }, async () => {
    await waitFor(async () => !(await portOpen(ports(i).client)), {
      timeoutMs: 10_000,
      intervalMs: 20,
      what: `nats-cluster node ${i} releasing its port`,
    });
    if (!running(i)) await launch(i, binary);
    await waitWhole();
  });
}

/**
 * Runs `fn` with the cluster to itself: a test that kills its nodes holds it for its whole body.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(fn) {
  return withLock(
    join(stateDir("nats-cluster"), "exclusive.lock"),
    { what: "nats-cluster, held by a test that kills its nodes", timeoutMs: 10 * 60_000 },
    fn,
  );
}

/** The three client addresses, comma-separated. */
export function bootstrap() {
  return NODES.map((i) => `nats://${HOST}:${ports(i).client}`).join(",");
}

/**
 * The node a server name names (1-3), for a test that asks JetStream who leads a stream.
 * @param {string} server
 */
export function nodeOf(server) {
  const i = NODES.find((n) => serverName(n) === server);
  if (i === undefined) throw new Error(`"${server}" is no node of nats-cluster`);
  return i;
}

/**
 * The node (1-3) leading JetStream's meta group, which answers the creation of streams and
 * consumers, as a running node's monitoring names it; `undefined` while none does.
 */
export async function metaLeader() {
  for (const i of NODES) {
    if (!running(i)) continue;
    const jsz = await fetch(`http://${HOST}:${ports(i).monitor}/jsz`)
      .then((r) => r.json())
      .catch(() => undefined);
    const leader = /** @type {{ meta_cluster?: { leader?: string } } | undefined} */ (jsz)
      ?.meta_cluster?.leader;
    if (typeof leader === "string" && leader !== "") return nodeOf(leader);
  }
  return undefined;
}

export async function status() {
  const result = [];
  for (const i of NODES) {
    const pid = runningPid(files(i).pidFile);
    const ok = pid !== undefined && (await serving(i));
    result.push({
      running: ok,
      address: `node ${i} ${HOST}:${ports(i).client}`,
      ...(ok && pid !== undefined ? { pid, rssMiB: rssMiB(pid) } : {}),
    });
  }
  return result;
}

export function env() {
  return { NATS_CLUSTER_SERVERS: bootstrap() };
}
