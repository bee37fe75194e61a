// @ts-check
// What the Redis cluster (redisCluster.mjs) and the Sentinel set (redisSentinel.mjs) share: one
// redis-server process per node, started detached on a configuration written into the node's own
// folder, recognised by the pid it reports (so a stale pid file or a stranger on the port is never
// taken for ours), killed as a crash would kill it, and a short-lived client to ask it things.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { isAlive, portOpen, runningPid, startDetached, tail, waitFor } from "./process.mjs";

export const HOST = "127.0.0.1";

/**
 * One node: its folder (configuration, pid file, log, data), its port, the password its clients
 * give (none for a sentinel), and whether it runs as a sentinel.
 * @typedef {{ label: string, dir: string, port: number, password?: string, sentinel?: boolean }} RedisNode
 */

/** @param {RedisNode} node */
export function nodeFiles(node) {
  return {
    conf: join(node.dir, node.sentinel ? "sentinel.conf" : "redis.conf"),
    pidFile: join(node.dir, "redis.pid"),
    logFile: join(node.dir, "redis.log"),
  };
}

/**
 * Runs `work` on a client of the node that never retries (a node that does not answer fails the
 * call at once) and closes it.
 * @template T
 * @param {{ port: number, password?: string }} node
 * @param {(client: Redis) => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function ask(node, work) {
  const client = new Redis({
    host: HOST,
    port: node.port,
    ...(node.password === undefined ? {} : { password: node.password }),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 2000,
    commandTimeout: 5000,
    enableOfflineQueue: false,
  });
  client.on("error", () => {});
  try {
    await client.connect();
    return await work(client);
  } finally {
    client.disconnect();
  }
}

/**
 * The pid the server on the node's port reports, or undefined when nothing (or nothing that lets
 * us in) answers there.
 * @param {RedisNode} node
 */
export async function reportedPid(node) {
  try {
    const info = await ask(node, (c) => c.info("server"));
    const match = /process_id:(\d+)/.exec(info);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pid of the node's process when it runs from its own configuration; a stale pid file (the
 * process died, or the pid now belongs to something else) is removed.
 * @param {RedisNode} node
 */
export function nodePid(node) {
  const { conf, pidFile } = nodeFiles(node);
  const pid = runningPid(pidFile);
  if (pid !== undefined) {
    try {
      // redis-server rewrites its process title to "redis-server host:port": match the port.
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes("redis-server") && cmdline.includes(`:${node.port}`)) return pid;
      if (cmdline.includes(conf)) return pid;
    } catch {}
  }
  rmSync(pidFile, { force: true });
  return undefined;
}

/**
 * Starts the node from the configuration already written to its folder and waits until it
 * reports the pid started. Refuses when something else holds its port.
 * @param {RedisNode} node
 * @param {string} portVariable the variable that moves this node's port, for the refusal
 */
export async function startNode(node, portVariable) {
  if (await portOpen(node.port)) {
    throw new Error(
      `${node.label}: port ${node.port} on ${HOST} is in use by a process these tools did not start; stop it or set ${portVariable} to another free range`,
    );
  }
  const { conf, pidFile, logFile } = nodeFiles(node);
  writeFileSync(logFile, "");
  const started = startDetached({
    command: "redis-server",
    args: node.sentinel ? [conf, "--sentinel"] : [conf],
    logFile,
    pidFile,
    cwd: node.dir,
  });
  try {
    await waitFor(async () => (await reportedPid(node)) === started, {
      timeoutMs: 20_000,
      intervalMs: 50,
      pid: started,
      what: `${node.label} on ${HOST}:${node.port}`,
    });
  } catch (error) {
    if (isAlive(started)) process.kill(started, "SIGKILL");
    rmSync(pidFile, { force: true });
    throw new Error(
      `${/** @type {Error} */ (error).message}\n--- ${logFile} ---\n${tail(logFile)}`,
    );
  }
  return started;
}

/**
 * Kills the node with SIGKILL, as a crash would, waits until the process is gone and its port
 * free. Answers whether it was running.
 * @param {RedisNode} node
 */
export async function killNode(node) {
  const pid = nodePid(node);
  if (pid === undefined) return false;
  process.kill(pid, "SIGKILL");
  await waitFor(async () => !isAlive(pid), {
    timeoutMs: 10_000,
    intervalMs: 20,
    what: `${node.label} (pid ${pid}) dying`,
  });
  rmSync(nodeFiles(node).pidFile, { force: true });
  // The kernel can take a moment to release the listening socket of a killed process.
  await waitFor(async () => !(await portOpen(node.port)), {
    timeoutMs: 10_000,
    intervalMs: 20,
    what: `${node.label} releasing port ${node.port}`,
  });
  return true;
}
