// @ts-check
// A three-node Kafka 4.1 KRaft cluster (each node broker and controller) for failover tests, run
// from the same Maven Central jars as the single broker (kafka.mjs) on ports of its own. Not part
// of `up all`: three JVMs cost CPU on a 2-core machine, so the test that needs it starts it (up),
// kills and restarts nodes (killNode, startNode, restartAll), asks who leads (describeTopic) and
// stops it (down).
// State lives in stateDir("kafka-cluster"): libs/ (jars), tool/ (ClusterAdmin compiled), node-<id>/
// (data/, server.properties, server.log, kafka.pid), up.lock and exclusive.lock. A cluster none of
// whose nodes runs starts from freshly formatted data: it holds only test topics, and a test that
// died mid-kill leaves nothing half-replicated behind for the next one.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { javaBin, newClusterId, probe } from "./kafka.mjs";
import { resolveJars } from "./maven.mjs";
import {
  isAlive,
  portOpen,
  rssMiB,
  run,
  runningPid,
  sleep,
  startDetached,
  tail,
  waitFor,
  withLock,
} from "./process.mjs";
import { envPort, stateDir } from "./state.mjs";

export const name = "kafka-cluster";

/** The node ids, also their order in the port ranges. */
export const NODE_IDS = /** @type {const} */ ([1, 2, 3]);

const HOST = "127.0.0.1";
const CONFIG_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "kafka");
const START_BUDGET_MS = 120_000;
// Three JVMs beside the single broker on 2 cores: small heaps, one GC thread each, and the C1
// compiler only (a test cluster lives minutes; C2's compile work would compete with the test).
const JVM_FLAGS = [
  "-Xms128m",
  "-Xmx384m",
  "-XX:+UseG1GC",
  "-XX:MaxGCPauseMillis=20",
  "-XX:ParallelGCThreads=1",
  "-XX:ConcGCThreads=1",
  "-XX:TieredStopAtLevel=1",
  "-XX:+ExplicitGCInvokesConcurrent",
  "-Djava.awt.headless=true",
  "-Djava.net.preferIPv4Stack=true",
  `-Dlog4j2.configurationFile=${join(CONFIG_DIR, "log4j2.properties")}`,
];

// The short-lived tool (ClusterAdmin): the C1 compiler and a serial GC start it fastest.
const TOOL_FLAGS = [
  "-XX:TieredStopAtLevel=1",
  "-XX:+UseSerialGC",
  `-Dlog4j2.configurationFile=${join(CONFIG_DIR, "log4j2.properties")}`,
];

/**
 * The ports of every node: client ports from KAFKA_CLUSTER_PORT (default 19201, then 19202, 19203),
 * controller ports from KAFKA_CLUSTER_CONTROLLER_PORT (default 19211, 19212, 19213); apart from the
 * single broker's 19092-19094. Each node also listens for clients that reach it through a fault
 * proxy (the chaos suite's Toxiproxy): on KAFKA_CLUSTER_PROXIED_PORT (default 19221-19223), where
 * the proxy forwards to, and it advertises on that listener the proxy's own port,
 * KAFKA_CLUSTER_PROXY_PORT (default 19231-19233). A client bootstrapped through the proxy learns
 * the proxy's addresses from the metadata, so all its traffic, to every node, crosses the proxy;
 * with no proxy running, those addresses answer nothing, and no other client uses them.
 */
function ports() {
  const client = envPort("KAFKA_CLUSTER_PORT", 19201);
  const controller = envPort("KAFKA_CLUSTER_CONTROLLER_PORT", 19211);
  const proxied = envPort("KAFKA_CLUSTER_PROXIED_PORT", 19221);
  const proxy = envPort("KAFKA_CLUSTER_PROXY_PORT", 19231);
  return NODE_IDS.map((id, i) => ({
    id,
    port: client + i,
    controllerPort: controller + i,
    proxiedPort: proxied + i,
    proxyPort: proxy + i,
  }));
}

/**
 * What a fault proxy in front of the cluster must listen on and forward to, node by node: a proxy
 * listening on `listen` (the address the node advertises for proxied clients) forwarding to
 * `upstream` (the node's proxied listener).
 */
export function proxyRoutes() {
  return ports().map((n) => ({
    id: n.id,
    listen: `${HOST}:${n.proxyPort}`,
    upstream: `${HOST}:${n.proxiedPort}`,
  }));
}

/** The bootstrap list through the fault proxy: every node's advertised proxy address. */
export function proxiedBootstrap() {
  return ports()
    .map((n) => `${HOST}:${n.proxyPort}`)
    .join(",");
}

/** @param {number} id */
function nodePorts(id) {
  const found = ports().find((n) => n.id === id);
  if (!found) throw new Error(`kafka-cluster: no node ${id}; the nodes are ${NODE_IDS.join(", ")}`);
  return found;
}

function paths() {
  const dir = stateDir("kafka-cluster");
  return {
    dir,
    libs: join(dir, "libs"),
    lock: join(dir, "up.lock"),
    exclusiveLock: join(dir, "exclusive.lock"),
    tool: join(dir, "tool"),
  };
}

/** @param {number} id */
function nodePaths(id) {
  const dir = stateDir("kafka-cluster", `node-${id}`);
  return {
    dir,
    data: join(dir, "data"),
    config: join(dir, "server.properties"),
    log: join(dir, "server.log"),
    pidFile: join(dir, "kafka.pid"),
  };
}

/** The bootstrap list of every node, as clients take it. */
export function bootstrap() {
  return ports()
    .map((n) => `${HOST}:${n.port}`)
    .join(",");
}

/** @param {number} id */
function serverProperties(id) {
  const { port, controllerPort, proxiedPort, proxyPort } = nodePorts(id);
  const voters = ports()
    .map((n) => `${n.id}@${HOST}:${n.controllerPort}`)
    .join(",");
  return `# Written by tooling/brokers/src/kafkaCluster.mjs on every start; edit that file, not this one.
process.roles=broker,controller
node.id=${id}
controller.quorum.voters=${voters}
# PROXIED: clients that reach the node through a fault proxy, which listens on the advertised port
# and forwards to this listener (proxyRoutes); the nodes talk among themselves on PLAINTEXT.
listeners=PLAINTEXT://${HOST}:${port},CONTROLLER://${HOST}:${controllerPort},PROXIED://${HOST}:${proxiedPort}
advertised.listeners=PLAINTEXT://${HOST}:${port},PROXIED://${HOST}:${proxyPort}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,PROXIED:PLAINTEXT
log.dirs=${nodePaths(id).data}
# Every topic, the internal ones included, on all three nodes, and a write acknowledged by all
# (acks=all) needs two of them in sync: one node may die without losing an acknowledged record.
num.partitions=3
default.replication.factor=3
min.insync.replicas=2
auto.create.topics.enable=true
offsets.topic.replication.factor=3
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=3
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2
unclean.leader.election.enable=false
# Failover within seconds: the controller fences a broker that missed heartbeats for 4 s (9 s by
# default) and moves its leaderships to a replica in sync; a follower that stops fetching leaves
# the ISR after 10 s (30 s by default).
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=4000
replica.lag.time.max.ms=10000
controller.quorum.election.timeout.ms=1000
controller.quorum.fetch.timeout.ms=2000
# Tests join groups constantly; the 3 s default delay only slows every classic-group join.
group.initial.rebalance.delay.ms=0
group.consumer.min.session.timeout.ms=6000
group.consumer.session.timeout.ms=10000
group.consumer.min.heartbeat.interval.ms=500
group.consumer.heartbeat.interval.ms=1000
# Sized for 2 cores and a 384 MiB heap: the log cleaner's dedupe buffer is 128 MiB by default.
num.network.threads=1
num.io.threads=2
num.replica.fetchers=1
num.recovery.threads.per.data.dir=1
background.threads=2
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=8388608
log.retention.hours=24
`;
}

/**
 * The pid of node `id` if it runs; a stale pid file (the process died, or the pid now belongs to
 * something else) is removed.
 * @param {number} id
 */
function nodePid(id) {
  const p = nodePaths(id);
  const pid = runningPid(p.pidFile);
  if (pid !== undefined) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmdline.includes("kafka.Kafka") && cmdline.includes(p.config)) return pid;
    } catch {}
  }
  rmSync(p.pidFile, { force: true });
  return undefined;
}

/**
 * Whether node `id` serves clients and sees the whole cluster: its Metadata answer lists every
 * node (a broker lists only the unfenced ones).
 * @param {number} id
 */
async function servingWithAll(id) {
  const answer = await probe(nodePorts(id).port).catch(() => undefined);
  return answer !== undefined && answer.brokers === NODE_IDS.length;
}

/**
 * Formats the three nodes' storage with one new cluster id, each with its own node id, in one JVM.
 * @param {string} classpath
 */
async function formatAll(classpath) {
  for (const id of NODE_IDS) rmSync(nodePaths(id).data, { recursive: true, force: true });
  await run(javaBin(), [
    ...TOOL_FLAGS,
    "-cp",
    classpath,
    "ClusterAdmin",
    "format",
    newClusterId(),
    ...NODE_IDS.map((id) => nodePaths(id).config),
  ]);
}

/**
 * Compiles ClusterAdmin.java into the state folder when it changed (the source's hash is kept
 * beside the class), so each later run starts a JVM and no compiler.
 * @param {string} libsClasspath
 * @returns {Promise<string>} a classpath with the jars and the tool
 */
async function toolClasspath(libsClasspath) {
  const { tool } = paths();
  const source = join(CONFIG_DIR, "ClusterAdmin.java");
  const hash = createHash("sha256").update(readFileSync(source)).digest("hex");
  const marker = join(tool, ".source");
  if (!existsSync(marker) || readFileSync(marker, "utf8") !== hash) {
    rmSync(tool, { recursive: true, force: true });
    const javac = join(dirname(javaBin()), "javac");
    if (!existsSync(javac)) {
      throw new Error(
        `kafka-cluster: no javac beside ${javaBin()}: install a JDK (not only a JRE), e.g. openjdk-17-jdk-headless`,
      );
    }
    await run(javac, ["-cp", libsClasspath, "-d", tool, source]);
    writeFileSync(marker, hash);
  }
  return `${libsClasspath}${delimiter}${tool}`;
}

/**
 * Starts node `id` detached on its existing data; does not wait.
 * @param {number} id
 * @param {string} classpath
 */
function launch(id, classpath) {
  const p = nodePaths(id);
  // One log per run, so a failure message shows this run's lines; the previous run's is kept.
  if (existsSync(p.log)) renameSync(p.log, `${p.log}.prev`);
  return startDetached({
    command: javaBin(),
    args: [...JVM_FLAGS, "-cp", classpath, "kafka.Kafka", p.config],
    cwd: p.dir,
    logFile: p.log,
    pidFile: p.pidFile,
  });
}

/**
 * Waits until every node runs and sees all three; on failure stops nothing and names the logs.
 * @param {number[]} ids the nodes this call started (their death fails the wait at once)
 */
async function waitServing(ids) {
  const deadline = Date.now() + START_BUDGET_MS;
  for (;;) {
    const dead = ids.filter((id) => nodePid(id) === undefined);
    if (dead.length > 0) {
      throw new Error(
        `kafka-cluster: node ${dead.join(", ")} exited during startup; last lines of ${nodePaths(dead[0] ?? 1).log}:\n${tail(nodePaths(dead[0] ?? 1).log)}`,
      );
    }
    const serving = await Promise.all(NODE_IDS.map((id) => servingWithAll(id)));
    if (serving.every(Boolean)) return;
    if (Date.now() > deadline) {
      const late = NODE_IDS.filter((_, i) => !serving[i]);
      throw new Error(
        `kafka-cluster: node ${late.join(", ")} not serving with all ${NODE_IDS.length} nodes after ${START_BUDGET_MS / 1000} s; last lines of ${nodePaths(late[0] ?? 1).log}:\n${tail(nodePaths(late[0] ?? 1).log)}`,
      );
    }
    await sleep(250);
  }
}

/**
 * Stops every node with SIGKILL: the next start of a stopped cluster formats it afresh, so a
 * controlled shutdown (leaderships handed over node by node, seconds each) would buy nothing.
 * @param {(line: string) => void} log
 */
async function stopAll(log) {
  let any = false;
  for (const id of NODE_IDS) {
    const pid = nodePid(id);
    if (pid === undefined) continue;
    log(`kafka-cluster: stopping node ${id} (pid ${pid})`);
    process.kill(pid, "SIGKILL");
    any = true;
    await waitGone(id, pid);
    rmSync(nodePaths(id).pidFile, { force: true });
  }
  return any;
}

/**
 * Waits until node `id`'s process is gone and its ports refuse connections. A SIGKILLed JVM's main
 * thread shows as a zombie while its other threads are still exiting and holding its sockets: a
 * check of the ports right after, or a node started again on them, then found them taken (seen when
 * `up` restarted a cluster of an older configuration: "port 19203 ... is in use").
 * @param {number} id
 * @param {number} pid
 */
async function waitGone(id, pid) {
  const { port, controllerPort, proxiedPort } = nodePorts(id);
  await waitFor(
    async () =>
      !isAlive(pid) &&
      !(await portOpen(port)) &&
      !(await portOpen(controllerPort)) &&
      !(await portOpen(proxiedPort)),
    { timeoutMs: 10_000, intervalMs: 20, what: `node ${id} dying` },
  );
}

/**
 * Starts whatever part of the cluster is not running and waits until all three nodes serve and see
 * each other. Idempotent. Nodes running an older configuration (the tool changed since) make it
 * start the whole cluster afresh.
 * @param {(line: string) => void} log
 * @returns {Promise<{ already: boolean, address: string, ms: number }>}
 */
export async function up(log) {
  const started = Date.now();
  const address = bootstrap();
  const p = paths();
  return withLock(
    p.lock,
    { what: "kafka-cluster", timeoutMs: START_BUDGET_MS + 60_000 },
    async () => {
      const running = NODE_IDS.filter((id) => nodePid(id) !== undefined);
      const stale = running.filter((id) => {
        const config = nodePaths(id).config;
        return !existsSync(config) || readFileSync(config, "utf8") !== serverProperties(id);
      });
      if (stale.length > 0) {
        log(`kafka-cluster: node ${stale.join(", ")} runs an older configuration; starting afresh`);
        await stopAll(log);
        running.length = 0;
      }
      if (running.length === NODE_IDS.length) {
        await waitServing([]);
        return { already: true, address, ms: Date.now() - started };
      }
      for (const { id, port, controllerPort, proxiedPort } of ports()) {
        if (running.includes(id)) continue;
        for (const [taken, variable] of /** @type {const} */ ([
          [port, "KAFKA_CLUSTER_PORT"],
          [controllerPort, "KAFKA_CLUSTER_CONTROLLER_PORT"],
          [proxiedPort, "KAFKA_CLUSTER_PROXIED_PORT"],
        ])) {
          if (await portOpen(taken)) {
            throw new Error(
              `kafka-cluster: port ${taken} on ${HOST} (node ${id}) is in use by a process this tool did not start; stop that process or set ${variable} to the first of three free ports`,
            );
          }
        }
      }
      const classpath = await resolveJars(join(CONFIG_DIR, "pom.xml"), p.libs, log).catch(
        (error) => {
          if (/** @type {NodeJS.ErrnoException} */ (error).code !== "ENOENT") throw error;
          throw new Error(
            "kafka-cluster: mvn not found: install Maven 3.8 or newer (it fetches Kafka's jars from Maven Central)",
          );
        },
      );
      for (const id of NODE_IDS) writeFileSync(nodePaths(id).config, serverProperties(id));
      if (running.length === 0) {
        log(`kafka-cluster: formatting ${NODE_IDS.length} nodes afresh`);
        await formatAll(await toolClasspath(classpath));
      }
      const missing = NODE_IDS.filter((id) => !running.includes(id));
      for (const id of missing) launch(id, classpath);
      try {
        await waitServing(missing);
      } catch (error) {
        await stopAll(log); // leave no half-started cluster behind
        throw error;
      }
      return { already: false, address, ms: Date.now() - started };
    },
  );
}

/** @param {(line: string) => void} log */
export async function down(log) {
  return withLock(
    paths().lock,
    { what: "kafka-cluster", timeoutMs: START_BUDGET_MS + 60_000 },
    () => stopAll(log),
  );
}

/**
 * Kills node `id` with SIGKILL, as a crash would, and waits until the process is gone. The
 * cluster notices on its own (the controller fences the node after broker.session.timeout.ms).
 * @param {number} id
 */
export async function killNode(id) {
  nodePorts(id);
  await withLock(paths().lock, { what: "kafka-cluster", timeoutMs: START_BUDGET_MS }, async () => {
    const pid = nodePid(id);
    if (pid === undefined) {
      throw new Error(
        `kafka-cluster: node ${id} is not running; start the cluster with up() first`,
      );
    }
    process.kill(pid, "SIGKILL");
    await waitGone(id, pid);
    rmSync(nodePaths(id).pidFile, { force: true });
  });
}

/**
 * Starts node `id` again on its data (after killNode) and waits until every node serves and sees
 * all three, so the node is back in the cluster (its replicas then catch up on their own).
 * @param {number} id
 */
export async function startNode(id) {
  const { port, controllerPort } = nodePorts(id);
  await withLock(
    paths().lock,
    { what: "kafka-cluster", timeoutMs: START_BUDGET_MS + 60_000 },
    async () => {
      if (nodePid(id) !== undefined) {
        throw new Error(`kafka-cluster: node ${id} is already running; kill it first`);
      }
      // The kernel can take a moment to release the listening sockets of a killed process.
      await waitFor(async () => !(await portOpen(port)) && !(await portOpen(controllerPort)), {
        timeoutMs: 10_000,
        intervalMs: 50,
        what: `kafka-cluster node ${id} releasing ports ${port} and ${controllerPort}`,
      });
      launch(id, join(paths().libs, "*"));
      await waitServing([id]);
    },
  );
}

/**
 * Kills all three nodes with SIGKILL at once, as a crash of the whole cluster would, and starts them
 * again on their data; resolves once all three serve and see each other. Not `down` then `up`: `up`
 * formats a cluster none of whose nodes runs, and this keeps every record and committed offset. A
 * SIGKILL loses no write the nodes acknowledged: it was in the page cache, which outlives them.
 */
export async function restartAll() {
  await withLock(
    paths().lock,
    { what: "kafka-cluster", timeoutMs: START_BUDGET_MS + 60_000 },
    async () => {
      const pids = NODE_IDS.map((id) => nodePid(id));
      const missing = NODE_IDS.filter((_, i) => pids[i] === undefined);
      if (missing.length > 0) {
        throw new Error(
          `kafka-cluster: node ${missing.join(", ")} is not running; start the cluster with up() first`,
        );
      }
      for (const pid of pids) if (pid !== undefined) process.kill(pid, "SIGKILL");
      for (const [i, id] of NODE_IDS.entries()) {
        const pid = pids[i];
        if (pid !== undefined) await waitGone(id, pid);
        rmSync(nodePaths(id).pidFile, { force: true });
      }
      for (const id of NODE_IDS) launch(id, join(paths().libs, "*"));
      await waitServing([...NODE_IDS]);
    },
  );
}

/**
 * Runs `fn` with the cluster to itself: a test that kills nodes holds it for its whole body, so two
 * such tests (two files, two runs) never kill nodes under each other.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(fn) {
  return withLock(
    paths().exclusiveLock,
    { what: "kafka-cluster, held by a test that kills its nodes", timeoutMs: 10 * 60_000 },
    fn,
  );
}

/**
 * Runs ClusterAdmin.java (the Java client's Admin API) against the cluster.
 * @param {string[]} args
 * @param {number} timeoutMs how long the tool waits for its condition
 */
async function clusterAdmin(args, timeoutMs) {
  const [command, ...rest] = args;
  const classpath = await toolClasspath(join(paths().libs, "*"));
  /** @type {string} */
  const stdout = await new Promise((resolve, reject) => {
    execFile(
      javaBin(),
      [
        ...TOOL_FLAGS,
        "-cp",
        classpath,
        "ClusterAdmin",
        String(command),
        bootstrap(),
        ...rest,
        String(timeoutMs),
      ],
      { timeout: timeoutMs + 60_000 },
      (error, out, stderr) => {
        if (error) {
          reject(
            new Error(
              `kafka-cluster: ClusterAdmin ${args.join(" ")} failed: ${error.message}\n${stderr}`,
            ),
          );
        } else {
          resolve(out);
        }
      },
    );
  });
  // The client's own warnings (a node down) share stdout: only the tool's lines count.
  const answer = /^\d+ -?\d+ \S+( \S*)?$/;
  return stdout
    .split("\n")
    .filter((line) => answer.test(line))
    .map((line) => line.split(" "));
}

/** @param {string} list */
const ids = (list) => (list === "" || list === undefined ? [] : list.split(",").map(Number));

/**
 * Each partition of `topic`: its leader (-1: none), replicas and in-sync replicas, once every
 * partition has a leader and at least `isr` replicas in sync, and node `without` (if given) leads
 * none and is in no ISR; or what it was when `timeoutMs` ran out (the caller checks). A JVM start:
 * a few seconds.
 * @param {string} topic
 * @param {{ isr?: number, without?: number, timeoutMs?: number }} [options]
 * @returns {Promise<{ partition: number, leader: number, replicas: number[], isr: number[] }[]>}
 */
export async function describeTopic(topic, { isr = 1, without = -1, timeoutMs = 30_000 } = {}) {
  const lines = await clusterAdmin(["describe", topic, String(isr), String(without)], timeoutMs);
  return lines.map(([partition, leader, replicas = "", inSync = ""]) => ({
    partition: Number(partition),
    leader: Number(leader),
    replicas: ids(replicas),
    isr: ids(inSync),
  }));
}

/**
 * Each partition of `topic`: its end offset and `group`'s committed offset (-1: none), once the
 * committed offsets reach the ends, or as they were when `timeoutMs` ran out (the caller checks).
 * @param {string} group
 * @param {string} topic
 * @param {{ timeoutMs?: number }} [options]
 * @returns {Promise<{ partition: number, end: number, committed: number }[]>}
 */
export async function committedOffsets(group, topic, { timeoutMs = 30_000 } = {}) {
  const lines = await clusterAdmin(["offsets", group, topic], timeoutMs);
  return lines.map(([partition, end, committed]) => ({
    partition: Number(partition),
    end: Number(end),
    committed: Number(committed),
  }));
}

export async function status() {
  return ports().map(({ id, port }) => {
    const pid = nodePid(id);
    /** @type {{ running: boolean, address: string, pid?: number, rssMiB?: number }} */
    const s = { running: pid !== undefined, address: `node ${id} ${HOST}:${port}` };
    if (pid !== undefined) {
      s.pid = pid;
      const mem = rssMiB(pid);
      if (mem !== undefined) s.rssMiB = mem;
    }
    return s;
  });
}

export function env() {
  return { KAFKA_CLUSTER_BROKERS: bootstrap() };
}
