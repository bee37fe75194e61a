// @ts-check
// A Redis Sentinel set from Debian's redis-server: one master and one replica (the data nodes) and
// three sentinels watching them under the name "ruststream" (quorum 2), for the Redis package's
// Sentinel tests. Not part of `up all`: the tests that need it start it, kill the master
// (killData), wait for the sentinels to promote the replica (waitFailover), start the old master
// again (startData: the sentinels make it a replica) and stop the set. State lives in
// stateDir("redis-sentinel"): data-<i>/ and sentinel-<i>/ (configuration, log, pid), up.lock and
// exclusive.lock. A set none of whose processes runs starts afresh from generated configurations
// (the sentinels rewrite theirs as they learn the topology; those rewrites are kept while it runs).
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rssMiB, waitFor, withLock } from "./process.mjs";
import { ACL_USER, ensureInstalled, secrets } from "./redis.mjs";
import { ask, HOST, killNode, nodeFiles, nodePid, reportedPid, startNode } from "./redisNodes.mjs";
import { envPort, stateDir } from "./state.mjs";

export const name = "redis-sentinel";

/** The name the sentinels know the master by. */
export const MASTER_NAME = "ruststream";
/** Data nodes: 1 starts as the master, 2 as its replica. */
export const DATA = /** @type {const} */ ([1, 2]);
/** Sentinels. */
export const SENTINELS = /** @type {const} */ ([1, 2, 3]);
const START_BUDGET_MS = 60_000;
// A master that misses pings for 2 s is subjectively down; with two sentinels agreeing it is
// objectively down and the replica is promoted.
const DOWN_AFTER_MS = 2000;

/** @param {number} i */
function dataNode(i) {
  if (!DATA.includes(/** @type {1} */ (i))) {
    throw new Error(`redis-sentinel: no data node ${i}; they are ${DATA.join(", ")}`);
  }
  return {
    label: `redis-sentinel data node ${i}`,
    dir: stateDir("redis-sentinel", `data-${i}`),
    port: envPort("REDIS_SENTINEL_DATA_PORT", 17101) + i - 1,
    password: secrets().password,
  };
}

/** @param {number} i */
function sentinelNode(i) {
  return {
    label: `redis-sentinel sentinel ${i}`,
    dir: stateDir("redis-sentinel", `sentinel-${i}`),
    port: envPort("REDIS_SENTINEL_PORT", 17111) + i - 1,
    sentinel: true,
  };
}

const lockFile = () => join(stateDir("redis-sentinel"), "up.lock");

/**
 * A data node's configuration: no persistence, the machine's Redis password (also for replication)
 * and the ACL user of the protected instance; node 2 starts as node 1's replica.
 * @param {number} i
 */
function dataConfig(i) {
  const n = dataNode(i);
  const s = secrets();
  const lines = [
    `bind ${HOST}`,
    "protected-mode yes",
    `port ${n.port}`,
    `dir ${n.dir}`,
    "daemonize no",
    'logfile ""',
    'save ""',
    "appendonly no",
    "repl-diskless-sync yes",
    "repl-diskless-sync-delay 0",
    `requirepass ${s.password}`,
    `masterauth ${s.password}`,
    `user ${ACL_USER} on >${s.aclPassword} ~* &* +@all`,
  ];
  if (i !== 1) lines.push(`replicaof ${HOST} ${dataNode(1).port}`);
  return `${lines.join("\n")}\n`;
}

/** @param {number} i */
function sentinelConfig(i) {
  const n = sentinelNode(i);
  return [
    `bind ${HOST}`,
    `port ${n.port}`,
    `dir ${n.dir}`,
    "daemonize no",
    'logfile ""',
    `sentinel monitor ${MASTER_NAME} ${HOST} ${dataNode(1).port} 2`,
    `sentinel auth-pass ${MASTER_NAME} ${secrets().password}`,
    `sentinel down-after-milliseconds ${MASTER_NAME} ${DOWN_AFTER_MS}`,
    `sentinel failover-timeout ${MASTER_NAME} 10000`,
    `sentinel parallel-syncs ${MASTER_NAME} 1`,
    "",
  ].join("\n");
}

/** Every process of the set, data nodes first. */
function everyNode() {
  return [...DATA.map(dataNode), ...SENTINELS.map(sentinelNode)];
}

/** @param {{ port: number, password?: string, label: string, dir: string, sentinel?: boolean }} n */
async function runs(n) {
  const pid = nodePid(n);
  return pid !== undefined && (await reportedPid(n)) === pid;
}

/**
 * What a sentinel says of the master: its port, how many replicas and other sentinels it knows,
 * and its flags.
 * @param {number} i
 */
async function sentinelView(i) {
  const fields = /** @type {string[]} */ (
    await ask(sentinelNode(i), (c) => c.call("SENTINEL", "MASTER", MASTER_NAME))
  );
  /** @type {Record<string, string>} */
  const view = {};
  for (let f = 0; f + 1 < fields.length; f += 2) view[fields[f] ?? ""] = fields[f + 1] ?? "";
  return {
    port: Number(view.port),
    replicas: Number(view["num-slaves"]),
    sentinels: Number(view["num-other-sentinels"]) + 1,
    flags: view.flags ?? "",
  };
}

/** The port of the master as every running sentinel names it, or undefined while they disagree. */
async function agreedMaster() {
  const ports = new Set();
  for (const i of SENTINELS) {
    if (!(await runs(sentinelNode(i)))) continue;
    const view = await sentinelView(i);
    if (view.flags !== "master") return undefined;
    ports.add(view.port);
  }
  return ports.size === 1 ? /** @type {number} */ ([...ports][0]) : undefined;
}

/**
 * Whether the set is whole: every process runs, the sentinels agree on a master that answers as
 * one, know the replica and each other, and the replica's copy is in sync.
 */
async function healthy() {
  for (const n of everyNode()) if (!(await runs(n))) return false;
  const master = await agreedMaster();
  if (master === undefined) return false;
  for (const i of SENTINELS) {
    const view = await sentinelView(i);
    if (view.replicas !== DATA.length - 1 || view.sentinels !== SENTINELS.length) return false;
  }
  for (const i of DATA) {
    const n = dataNode(i);
    const info = /** @type {string} */ (await ask(n, (c) => c.info("replication")));
    const role = /role:(\w+)/.exec(info)?.[1];
    if (n.port === master ? role !== "master" : role !== "slave") return false;
    if (n.port !== master && !/master_link_status:up/.test(info)) return false;
  }
  return true;
}

/** Stops every process of the set (SIGKILL: the next start begins afresh anyway). */
async function stopAll(/** @type {(line: string) => void} */ log) {
  let any = false;
  for (const n of everyNode()) {
    if (await killNode(n)) {
      log(`redis-sentinel: stopped ${n.label}`);
      any = true;
    }
  }
  return any;
}

/**
 * Starts whatever part of the set is not running and waits until it is whole. Idempotent. With
 * nothing running, every configuration is written afresh; otherwise a missing process starts on
 * the configuration it has (the sentinels' rewrites kept; a returning old master is made a replica
 * by the sentinels).
 * @param {(line: string) => void} log
 * @returns {Promise<{ already: boolean, address: string, ms: number }>}
 */
export async function up(log) {
  const began = Date.now();
  await ensureInstalled(log);
  return withLock(
    lockFile(),
    { what: "redis-sentinel", timeoutMs: START_BUDGET_MS * 2 },
    async () => {
      const running = [];
      for (const n of everyNode()) if (await runs(n)) running.push(n);
      const fresh = running.length === 0;
      if (!fresh && running.length === everyNode().length) {
        await waitFor(healthy, { timeoutMs: START_BUDGET_MS, what: "redis-sentinel healthy" });
        return { already: true, address: sentinelAddresses(), ms: Date.now() - began };
      }
      try {
        for (const i of DATA) {
          const n = dataNode(i);
          if (running.some((r) => r.port === n.port)) continue;
          const { conf } = nodeFiles(n);
          if (fresh || !existsSync(conf)) {
            rmSync(join(n.dir, "dump.rdb"), { force: true });
            writeFileSync(conf, dataConfig(i));
          }
          await startNode(n, "REDIS_SENTINEL_DATA_PORT");
        }
        for (const i of SENTINELS) {
          const n = sentinelNode(i);
          if (running.some((r) => r.port === n.port)) continue;
          const { conf } = nodeFiles(n);
          if (fresh || !existsSync(conf)) writeFileSync(conf, sentinelConfig(i));
          await startNode(n, "REDIS_SENTINEL_PORT");
        }
        await waitFor(healthy, {
          timeoutMs: START_BUDGET_MS,
          intervalMs: 200,
          what: `redis-sentinel ${fresh ? "forming" : "healing"}`,
        });
      } catch (error) {
        if (fresh) await stopAll(log);
        throw error;
      }
      return { already: false, address: sentinelAddresses(), ms: Date.now() - began };
    },
  );
}

/** @param {(line: string) => void} log */
export async function down(log) {
  return withLock(lockFile(), { what: "redis-sentinel", timeoutMs: START_BUDGET_MS * 2 }, () =>
    stopAll(log),
  );
}

/** The data node (1 or 2) the sentinels name as the master now. */
export async function master() {
  const port = await agreedMaster();
  const found = DATA.find((i) => dataNode(i).port === port);
  if (found === undefined) throw new Error("redis-sentinel: the sentinels agree on no master");
  return found;
}

/**
 * Kills data node `i` with SIGKILL, as a crash would.
 * @param {number} i
 */
export async function killData(i) {
  await withLock(lockFile(), { what: "redis-sentinel", timeoutMs: START_BUDGET_MS }, async () => {
    if (!(await killNode(dataNode(i)))) {
      throw new Error(
        `redis-sentinel: data node ${i} is not running; start the set with up() first`,
      );
    }
  });
}

/**
 * Waits until every running sentinel names a master other than data node `i` and that node answers
 * as a master. Answers how long that took, in ms.
 * @param {number} i
 * @param {{ timeoutMs?: number }} [options]
 */
export async function waitFailover(i, { timeoutMs = 60_000 } = {}) {
  const began = Date.now();
  const old = dataNode(i).port;
  await waitFor(
    async () => {
      const port = await agreedMaster();
      if (port === undefined || port === old) return false;
      const info = /** @type {string} */ (
        await ask({ port, password: secrets().password }, (c) => c.info("replication"))
      );
      return /role:master/.test(info);
    },
    { timeoutMs, intervalMs: 100, what: `redis-sentinel failing over from data node ${i}` },
  );
  return Date.now() - began;
}

/**
 * Starts data node `i` again (after killData) on its configuration and waits until the set is whole:
 * the sentinels turn it into a replica of the new master and it copies the data.
 * @param {number} i
 */
export async function startData(i) {
  await withLock(
    lockFile(),
    { what: "redis-sentinel", timeoutMs: START_BUDGET_MS * 2 },
    async () => {
      const n = dataNode(i);
      if (nodePid(n) !== undefined)
        throw new Error(`redis-sentinel: data node ${i} is already running`);
      await startNode(n, "REDIS_SENTINEL_DATA_PORT");
      await waitFor(healthy, {
        timeoutMs: START_BUDGET_MS,
        intervalMs: 200,
        what: `redis-sentinel healing with data node ${i}`,
      });
    },
  );
}

/**
 * Runs `fn` with the set to itself: a test that kills a data node holds it for its whole body.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(fn) {
  return withLock(
    join(stateDir("redis-sentinel"), "exclusive.lock"),
    { what: "redis-sentinel, held by a test that kills its master", timeoutMs: 10 * 60_000 },
    fn,
  );
}

/** The three sentinels' addresses, comma-separated. */
export function sentinelAddresses() {
  return SENTINELS.map((i) => `${HOST}:${sentinelNode(i).port}`).join(",");
}

export async function status() {
  return everyNode().map((n) => {
    const pid = nodePid(n);
    /** @type {{ running: boolean, address: string, pid?: number, rssMiB?: number }} */
    const s = {
      running: pid !== undefined,
      address: `${n.label.replace("redis-sentinel ", "")} ${HOST}:${n.port}`,
    };
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
    REDIS_SENTINELS: sentinelAddresses(),
    REDIS_SENTINEL_NAME: MASTER_NAME,
    REDIS_SENTINEL_PASSWORD: s.password,
    REDIS_SENTINEL_ACL_USER: ACL_USER,
    REDIS_SENTINEL_ACL_PASSWORD: s.aclPassword,
  };
}
