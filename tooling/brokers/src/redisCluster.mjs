// @ts-check
// A six-node Redis Cluster (three masters, three replicas) from Debian's redis-server, for the
// Redis package's cluster tests. Not part of `up all`: the tests that need it start it (their own
// global setup), kill and restart nodes (killNode, waitServedWithout, startNode), migrate a slot
// (migrateSlot), ask who serves what (masters, slotOf, masterOf) and stop it. State lives in
// stateDir("redis-cluster"): node-<i>/ (redis.conf, nodes.conf, redis.log, redis.pid), up.lock and
// exclusive.lock. A cluster none of whose nodes runs is created afresh (every node's nodes.conf
// removed): it holds only test keys, and a test that died mid-failover leaves no half-joined
// topology for the next one.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rssMiB, waitFor, withLock } from "./process.mjs";
import { ACL_USER, ensureInstalled, secrets } from "./redis.mjs";
import {
  ask,
  HOST,
  killNode as killRedisNode,
  nodeFiles,
  nodePid,
  reportedPid,
  startNode as startRedisNode,
} from "./redisNodes.mjs";
import { envPort, stateDir } from "./state.mjs";

export const name = "redis-cluster";

/** Node indexes; 1-3 start as the masters, 4-6 as the replicas of 1-3. */
export const NODES = /** @type {const} */ ([1, 2, 3, 4, 5, 6]);
const MASTERS = 3;
const SLOTS = 16384;
const START_BUDGET_MS = 60_000;
// Failover in seconds: a master that misses pings for 2 s is suspected, failed once a majority of
// masters agree, and its replica (always eligible: validity factor 0) takes over.
const NODE_TIMEOUT_MS = 2000;

/** The client port of node `i`: REDIS_CLUSTER_PORT (default 17001) and the five after it. */
function portOf(/** @type {number} */ i) {
  return envPort("REDIS_CLUSTER_PORT", 17001) + i - 1;
}

/** @param {number} i */
function node(i) {
  if (!NODES.includes(/** @type {1} */ (i))) {
    throw new Error(`redis-cluster: no node ${i}; the nodes are ${NODES.join(", ")}`);
  }
  return {
    label: `redis-cluster node ${i}`,
    dir: stateDir("redis-cluster", `node-${i}`),
    port: portOf(i),
    password: secrets().password,
  };
}

const lockFile = () => join(stateDir("redis-cluster"), "up.lock");

/**
 * Every node's configuration: cluster mode with a fast failover, no persistence (a test cluster
 * lives minutes), the machine's Redis password on the default user (and for replication), and the
 * ACL user the single protected instance has.
 * @param {number} i
 */
function config(i) {
  const n = node(i);
  const s = secrets();
  return [
    `bind ${HOST}`,
    "protected-mode yes",
    `port ${n.port}`,
    `dir ${n.dir}`,
    "daemonize no",
    'logfile ""',
    'save ""',
    "appendonly no",
    "cluster-enabled yes",
    "cluster-config-file nodes.conf",
    `cluster-node-timeout ${NODE_TIMEOUT_MS}`,
    "cluster-replica-validity-factor 0",
    "cluster-allow-reads-when-down no",
    // A replica (re)joining copies its master's data straight over the socket, without a file.
    "repl-diskless-sync yes",
    "repl-diskless-sync-delay 0",
    `requirepass ${s.password}`,
    `masterauth ${s.password}`,
    `user ${ACL_USER} on >${s.aclPassword} ~* &* +@all`,
    "",
  ].join("\n");
}

/**
 * What one node says of the cluster: its id, and per node of CLUSTER NODES its id, port, role,
 * master (for a replica), the slot ranges it serves and whether it is failed or disconnected.
 * @typedef {{ id: string, port: number, role: "master" | "replica", master: string | undefined, slots: [number, number][], failed: boolean, connected: boolean }} NodeView
 */

/**
 * @param {string} text CLUSTER NODES
 * @returns {NodeView[]}
 */
function parseNodes(text) {
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [id = "", address = "", flags = "", master = "-", , , , link = "", ...slots] =
        line.split(" ");
      const port = Number(/:(\d+)@/.exec(address)?.[1] ?? 0);
      const flagList = flags.split(",");
      return {
        id,
        port,
        role: flagList.includes("master") ? "master" : "replica",
        master: master === "-" ? undefined : master,
        slots: slots
          .filter((s) => !s.startsWith("["))
          .map((s) => {
            const [a, b] = s.split("-").map(Number);
            return /** @type {[number, number]} */ ([a ?? 0, b ?? a ?? 0]);
          }),
        failed: flagList.includes("fail") || flagList.includes("fail?"),
        connected: link === "connected",
      };
    });
}

/** @param {number} i */
async function viewOf(i) {
  return parseNodes(/** @type {string} */ (await ask(node(i), (c) => c.call("CLUSTER", "NODES"))));
}

/** @param {number} i */
async function clusterState(i) {
  const info = /** @type {string} */ (await ask(node(i), (c) => c.call("CLUSTER", "INFO")));
  return /cluster_state:(\w+)/.exec(info)?.[1];
}

/** The nodes running now (their process alive and answering as ours). */
async function runningNodes() {
  const up = [];
  for (const i of NODES) {
    const n = node(i);
    const pid = nodePid(n);
    if (pid !== undefined && (await reportedPid(n)) === pid) up.push(i);
  }
  return up;
}

/**
 * Whether the running nodes form a healthy cluster: each says `ok`, sees every other running node
 * connected and none failed, every slot is served by a master that runs, and every running replica
 * has its copy in sync.
 * @param {number[]} running
 */
async function healthy(running) {
  const ports = new Set(running.map(portOf));
  for (const i of running) {
    if ((await clusterState(i)) !== "ok") return false;
    const view = await viewOf(i);
    const others = view.filter((v) => ports.has(v.port));
    if (others.length !== running.length) return false;
    if (others.some((v) => v.failed || (v.port !== portOf(i) && !v.connected))) return false;
    const served = view
      .filter((v) => v.role === "master" && ports.has(v.port))
      .reduce((sum, v) => sum + v.slots.reduce((s, [a, b]) => s + b - a + 1, 0), 0);
    if (served !== SLOTS) return false;
    if (view.find((v) => v.port === portOf(i))?.role === "replica") {
      const info = /** @type {string} */ (await ask(node(i), (c) => c.info("replication")));
      if (!/master_link_status:up/.test(info) || /master_sync_in_progress:1/.test(info))
        return false;
    }
  }
  return true;
}

/** @param {number[]} running @param {string} what */
async function waitHealthy(running, what) {
  await waitFor(() => healthy(running), {
    timeoutMs: START_BUDGET_MS,
    intervalMs: 200,
    what: `redis-cluster ${what}`,
  });
}

/**
 * Makes a cluster of six fresh nodes: slots split in three ranges over nodes 1-3 (each with its own
 * config epoch, set before it meets anyone), every node introduced to node 1, then nodes 4-6 made
 * replicas of 1-3 once they know their masters.
 */
async function create() {
  const ids = new Map();
  for (const i of NODES) {
    ids.set(i, /** @type {string} */ (await ask(node(i), (c) => c.call("CLUSTER", "MYID"))));
  }
  for (let i = 1; i <= MASTERS; i++) {
    const first = Math.floor(((i - 1) * SLOTS) / MASTERS);
    const last = Math.floor((i * SLOTS) / MASTERS) - 1;
    await ask(node(i), async (c) => {
      await c.call("CLUSTER", "SET-CONFIG-EPOCH", String(i));
      await c.call("CLUSTER", "ADDSLOTSRANGE", String(first), String(last));
    });
  }
  for (const i of NODES.slice(1)) {
    await ask(node(i), (c) => c.call("CLUSTER", "MEET", HOST, String(portOf(1))));
  }
  await waitFor(
    async () => {
      for (const i of NODES) if ((await viewOf(i)).length !== NODES.length) return false;
      return true;
    },
    { timeoutMs: START_BUDGET_MS, intervalMs: 100, what: "redis-cluster nodes meeting" },
  );
  for (let i = MASTERS + 1; i <= NODES.length; i++) {
    const master = ids.get(i - MASTERS);
    await waitFor(async () => (await viewOf(i)).some((v) => v.id === master), {
      timeoutMs: START_BUDGET_MS,
      intervalMs: 100,
      what: `redis-cluster node ${i} learning its master`,
    });
    await ask(node(i), (c) => c.call("CLUSTER", "REPLICATE", master));
  }
}

/** Stops every node (SIGKILL: the next start creates the cluster afresh anyway). */
async function stopAll(/** @type {(line: string) => void} */ log) {
  let any = false;
  for (const i of NODES) {
    if (await killRedisNode(node(i))) {
      log(`redis-cluster: stopped node ${i}`);
      any = true;
    }
  }
  return any;
}

/**
 * Starts whatever part of the cluster is not running and waits until it is healthy. Idempotent.
 * With no node running, the cluster is created afresh; otherwise the missing nodes start on their
 * nodes.conf and rejoin (a master that was failed over comes back as a replica).
 * @param {(line: string) => void} log
 * @returns {Promise<{ already: boolean, address: string, ms: number }>}
 */
export async function up(log) {
  const began = Date.now();
  await ensureInstalled(log);
  return withLock(
    lockFile(),
    { what: "redis-cluster", timeoutMs: START_BUDGET_MS * 2 },
    async () => {
      const running = await runningNodes();
      const stale = running.filter((i) => {
        const { conf } = nodeFiles(node(i));
        return !existsSync(conf) || readFileSync(conf, "utf8") !== config(i);
      });
      if (stale.length > 0) {
        log(`redis-cluster: node ${stale.join(", ")} runs an older configuration; starting afresh`);
        await stopAll(log);
        running.length = 0;
      }
      if (running.length === NODES.length) {
        await waitHealthy([...NODES], "healthy");
        return { already: true, address: bootstrap(), ms: Date.now() - began };
      }
      const fresh = running.length === 0;
      try {
        for (const i of NODES) {
          if (running.includes(i)) continue;
          const n = node(i);
          if (fresh) {
            for (const file of ["nodes.conf", "dump.rdb"])
              rmSync(join(n.dir, file), { force: true });
          }
          writeFileSync(nodeFiles(n).conf, config(i));
          await startRedisNode(n, "REDIS_CLUSTER_PORT");
        }
        if (fresh) await create();
        await waitHealthy([...NODES], fresh ? "forming" : "healing");
      } catch (error) {
        if (fresh) await stopAll(log); // leave no half-made cluster behind
        throw error;
      }
      return { already: false, address: bootstrap(), ms: Date.now() - began };
    },
  );
}

/** @param {(line: string) => void} log */
export async function down(log) {
  return withLock(lockFile(), { what: "redis-cluster", timeoutMs: START_BUDGET_MS * 2 }, () =>
    stopAll(log),
  );
}

/**
 * Kills node `i` with SIGKILL, as a crash would. The cluster notices by itself: after the node
 * timeout its replica takes its slots over (waitServedWithout waits for that).
 * @param {number} i
 */
export async function killNode(i) {
  await withLock(lockFile(), { what: "redis-cluster", timeoutMs: START_BUDGET_MS }, async () => {
    if (!(await killRedisNode(node(i)))) {
      throw new Error(`redis-cluster: node ${i} is not running; start the cluster with up() first`);
    }
  });
}

/**
 * Starts node `i` again on its nodes.conf (after killNode) and waits until the whole cluster is
 * healthy with it: a master that was failed over rejoins as a replica of its successor and copies
 * its data.
 * @param {number} i
 */
export async function startNode(i) {
  await withLock(
    lockFile(),
    { what: "redis-cluster", timeoutMs: START_BUDGET_MS * 2 },
    async () => {
      const n = node(i);
      if (nodePid(n) !== undefined) throw new Error(`redis-cluster: node ${i} is already running`);
      writeFileSync(nodeFiles(n).conf, config(i));
      await startRedisNode(n, "REDIS_CLUSTER_PORT");
      await waitHealthy(await runningNodes(), `healing with node ${i}`);
    },
  );
}

/**
 * Waits until the running nodes serve every slot without node `i` (killed): its replica was
 * promoted and every running node says the cluster is ok. Answers how long that took, in ms.
 * @param {number} i
 * @param {{ timeoutMs?: number }} [options]
 */
export async function waitServedWithout(i, { timeoutMs = 60_000 } = {}) {
  const began = Date.now();
  const running = (await runningNodes()).filter((r) => r !== i);
  await waitFor(
    async () => {
      for (const r of running) {
        if ((await clusterState(r)) !== "ok") return false;
        // Every slot on a live master other than node i (a node just killed still shows as a
        // master with its slots until the others agree it failed).
        const served = (await viewOf(r))
          .filter((v) => v.role === "master" && !v.failed && v.port !== portOf(i))
          .reduce((sum, v) => sum + v.slots.reduce((s, [a, b]) => s + b - a + 1, 0), 0);
        if (served !== SLOTS) return false;
      }
      return true;
    },
    { timeoutMs, intervalMs: 100, what: `redis-cluster serving every slot without node ${i}` },
  );
  return Date.now() - began;
}

/**
 * The masters as a running node sees them now: node index, id, and slot ranges.
 * @returns {Promise<{ node: number, id: string, slots: [number, number][] }[]>}
 */
export async function masters() {
  const [first] = await runningNodes();
  if (first === undefined) throw new Error("redis-cluster: no node runs; start it with up() first");
  return (await viewOf(first))
    .filter((v) => v.role === "master" && !v.failed && v.slots.length > 0)
    .map((v) => ({ node: v.port - portOf(1) + 1, id: v.id, slots: v.slots }))
    .sort((a, b) => a.node - b.node);
}

/** The hash slot of `key`, as the cluster computes it. */
export async function slotOf(/** @type {string} */ key) {
  const [first] = await runningNodes();
  if (first === undefined) throw new Error("redis-cluster: no node runs; start it with up() first");
  return Number(await ask(node(first), (c) => c.call("CLUSTER", "KEYSLOT", key)));
}

/** The node index of the master serving `key`'s slot. */
export async function masterOf(/** @type {string} */ key) {
  const slot = await slotOf(key);
  const owner = (await masters()).find((m) => m.slots.some(([a, b]) => slot >= a && slot <= b));
  if (owner === undefined) throw new Error(`redis-cluster: no master serves slot ${slot}`);
  return owner.node;
}

/**
 * Moves one slot, with its keys, to master `to` the way `redis-cli --cluster reshard` does:
 * IMPORTING on the target, MIGRATING on the source, MIGRATE of its keys in pages, then the slot
 * assigned to the target on every master. Clients meanwhile get ASK for keys already moved and
 * MOVED once it is done. Answers the node index it came from.
 * @param {number} slot
 * @param {number} to
 * @param {{ beforeAssign?: () => Promise<void> }} [options] beforeAssign: runs once the keys are on
 *   the target and before the slot is assigned to it, while the source answers ASK for them
 */
export async function migrateSlot(slot, to, options = {}) {
  const all = await masters();
  const source = all.find((m) => m.slots.some(([a, b]) => slot >= a && slot <= b));
  const target = all.find((m) => m.node === to);
  if (source === undefined || target === undefined) {
    throw new Error(
      `redis-cluster: slot ${slot} or master ${to} not found among ${JSON.stringify(all)}`,
    );
  }
  if (source.node === to) throw new Error(`redis-cluster: slot ${slot} is already on node ${to}`);
  const password = secrets().password;
  await ask(node(to), (c) => c.call("CLUSTER", "SETSLOT", String(slot), "IMPORTING", source.id));
  await ask(node(source.node), async (c) => {
    await c.call("CLUSTER", "SETSLOT", String(slot), "MIGRATING", target.id);
    for (;;) {
      const keys = /** @type {string[]} */ (
        await c.call("CLUSTER", "GETKEYSINSLOT", String(slot), "100")
      );
      if (keys.length === 0) break;
      await c.call(
        "MIGRATE",
        HOST,
        String(portOf(to)),
        "",
        "0",
        "10000",
        "AUTH",
        password,
        "KEYS",
        ...keys,
      );
    }
  });
  await options.beforeAssign?.();
  // The target first, then the source, then the others (the order redis-cli uses).
  for (const m of [target, source, ...all.filter((m) => m !== target && m !== source)]) {
    await ask(node(m.node), (c) => c.call("CLUSTER", "SETSLOT", String(slot), "NODE", target.id));
  }
  return source.node;
}

/**
 * Runs `fn` with the cluster to itself: a test that kills nodes or moves slots holds it for its
 * whole body, so two such tests never change the topology under each other.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(fn) {
  return withLock(
    join(stateDir("redis-cluster"), "exclusive.lock"),
    { what: "redis-cluster, held by a test that changes its topology", timeoutMs: 10 * 60_000 },
    fn,
  );
}

/** The six addresses, comma-separated: what a client is given as its seed nodes. */
export function bootstrap() {
  return NODES.map((i) => `${HOST}:${portOf(i)}`).join(",");
}

export async function status() {
  return NODES.map((i) => {
    const n = node(i);
    const pid = nodePid(n);
    /** @type {{ running: boolean, address: string, pid?: number, rssMiB?: number }} */
    const s = { running: pid !== undefined, address: `node ${i} ${HOST}:${n.port}` };
    if (pid !== undefined) {
      s.pid = pid;
      const mem = rssMiB(pid);
      if (mem !== undefined) s.rssMiB = mem;
    }
    return s;
  });
}

export function env() {
  const s = secrets();
  return {
    REDIS_CLUSTER_NODES: bootstrap(),
    REDIS_CLUSTER_PASSWORD: s.password,
    REDIS_CLUSTER_ACL_USER: ACL_USER,
    REDIS_CLUSTER_ACL_PASSWORD: s.aclPassword,
  };
}
