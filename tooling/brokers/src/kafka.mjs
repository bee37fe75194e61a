// @ts-check
// Kafka 4.1 (KRaft, one node that is broker and controller) run from its Maven Central jars.
// State lives in stateDir("kafka"): libs/ (jars), data/ (log.dirs), server.properties (written on
// every start from the environment), server.log, kafka.pid. See registry.mjs for the module shape.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveJars } from "./maven.mjs";
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

export const name = "kafka";

const HOST = "127.0.0.1";
const CONFIG_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "kafka");
const START_BUDGET_MS = 120_000;
// Kafka's own defaults are -Xms1g -Xmx1g; a test broker on 2 cores needs far less resident memory.
const JVM_FLAGS = [
  "-Xms256m",
  "-Xmx1g",
  "-XX:+UseG1GC",
  "-XX:MaxGCPauseMillis=20",
  "-XX:+ExplicitGCInvokesConcurrent",
  "-Djava.awt.headless=true",
  "-Djava.net.preferIPv4Stack=true",
  `-Dlog4j2.configurationFile=${join(CONFIG_DIR, "log4j2.properties")}`,
];

function ports() {
  return {
    port: envPort("KAFKA_PORT", 19092),
    controllerPort: envPort("KAFKA_CONTROLLER_PORT", 19093),
  };
}

function paths() {
  const dir = stateDir("kafka");
  return {
    dir,
    libs: join(dir, "libs"),
    data: join(dir, "data"),
    config: join(dir, "server.properties"),
    log: join(dir, "server.log"),
    pidFile: join(dir, "kafka.pid"),
    lock: join(dir, "up.lock"),
  };
}

/** The java to run, checked up front: a detached spawn of a missing binary fails only later. */
function javaBin() {
  const home = process.env.JAVA_HOME;
  const candidates = home
    ? [join(home, "bin", "java")]
    : (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, "java"));
  const found = candidates.find((file) => existsSync(file));
  if (found) return found;
  throw new Error(
    home
      ? `kafka: no java at ${candidates[0]}: fix JAVA_HOME (Kafka 4 needs Java 17 or newer)`
      : "kafka: java not found on PATH: install OpenJDK 17 or newer, or set JAVA_HOME",
  );
}

/**
 * @param {{ port: number, controllerPort: number, data: string }} o
 */
function serverProperties({ port, controllerPort, data }) {
  return `# Written by tooling/brokers/src/kafka.mjs on every start; edit that file, not this one.
process.roles=broker,controller
node.id=1
# A static voter set: format needs no --standalone, and a changed controller port needs no re-format.
controller.quorum.voters=1@${HOST}:${controllerPort}
listeners=PLAINTEXT://${HOST}:${port},CONTROLLER://${HOST}:${controllerPort}
advertised.listeners=PLAINTEXT://${HOST}:${port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=${data}
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
# Internal topics default to replication 3 and 50 partitions: on one node the first would fail
# (no InitProducerId, no group coordinator), the second makes the first group join or transaction slow.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# Tests join groups constantly; the 3 s default delay only slows every classic-group join.
group.initial.rebalance.delay.ms=0
# KIP-848 (group.protocol=consumer) liveness fast enough for tests.
group.consumer.min.session.timeout.ms=6000
group.consumer.session.timeout.ms=10000
group.consumer.min.heartbeat.interval.ms=500
group.consumer.heartbeat.interval.ms=1000
# Sized for 2 cores.
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
background.threads=2
log.retention.hours=24
`;
}

/**
 * One Kafka Metadata (v6) round trip on 127.0.0.1:port. Resolves the cluster id and the number of
 * live brokers; a broker answers with itself only once it is started and unfenced, so
 * `brokers > 0` means it really serves clients. Hand-written so the CLI needs no node_modules.
 * @param {number} port
 * @param {number} [timeoutMs]
 * @returns {Promise<{ clusterId: string | null, brokers: number }>}
 */
export function probe(port, timeoutMs = 2000) {
  const clientId = Buffer.from("ruststream-brokers");
  const request = Buffer.alloc(4 + 2 + 2 + 4 + 2 + clientId.length + 4 + 1);
  let at = request.writeInt32BE(request.length - 4, 0);
  at = request.writeInt16BE(3, at); // api key: Metadata
  at = request.writeInt16BE(6, at); // api version (kept by Kafka 4's KIP-896 cut, used by kafkajs)
  at = request.writeInt32BE(1, at); // correlation id
  at = request.writeInt16BE(clientId.length, at);
  at += clientId.copy(request, at);
  at = request.writeInt32BE(-1, at); // topics: null = all; we only read the broker list
  request.writeInt8(0, at); // allow_auto_topic_creation

  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: HOST });
    /** @type {Buffer[]} */
    const chunks = [];
    let received = 0;
    /** @param {Error | null} error @param {{ clusterId: string | null, brokers: number }} [result] */
    const finish = (error, result) => {
      socket.destroy();
      if (error) reject(error);
      else if (result) resolve(result);
    };
    socket.setTimeout(timeoutMs, () => finish(new Error(`no Metadata answer on ${HOST}:${port}`)));
    socket.once("error", (error) => finish(error));
    socket.once("connect", () => socket.write(request));
    socket.once("close", () => finish(new Error(`${HOST}:${port} closed the connection`)));
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      received += chunk.length;
      const buf = Buffer.concat(chunks, received);
      if (buf.length < 4 || buf.length < 4 + buf.readInt32BE(0)) return;
      try {
        finish(null, parseMetadata(buf));
      } catch (error) {
        finish(new Error(`${HOST}:${port} answered, but not like a Kafka broker: ${error}`));
      }
    });
  });
}

/** @param {Buffer} buf a whole Metadata v6 response frame */
function parseMetadata(buf) {
  let at = 4;
  if (buf.readInt32BE(at) !== 1) throw new Error("wrong correlation id");
  at += 4 + 4; // correlation id, throttle_time_ms
  const brokers = buf.readInt32BE(at);
  at += 4;
  const string = () => {
    const len = buf.readInt16BE(at);
    at += 2;
    if (len < 0) return null;
    at += len;
    return buf.toString("utf8", at - len, at);
  };
  for (let i = 0; i < brokers; i++) {
    at += 4; // node_id
    string(); // host
    at += 4; // port
    string(); // rack
  }
  return { clusterId: string(), brokers };
}

/** @param {number} port */
async function serving(port) {
  const answer = await probe(port).catch(() => undefined);
  return answer !== undefined && answer.brokers > 0;
}

/**
 * The pid of our broker if it runs. A pid file whose process died, or whose pid now belongs to an
 * unrelated process (after a crash or reboot), is stale and removed.
 * @param {string} pidFile
 */
function ourPid(pidFile) {
  const pid = runningPid(pidFile);
  if (pid !== undefined) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("kafka.Kafka")) return pid;
    } catch {}
  }
  rmSync(pidFile, { force: true });
  return undefined;
}

/**
 * The client port a running broker was started with (from the config it was started with).
 * @param {string} config
 */
function startedPort(config) {
  if (!existsSync(config)) return undefined;
  const match = /^advertised\.listeners=PLAINTEXT:\/\/[^:]+:(\d+)$/m.exec(
    readFileSync(config, "utf8"),
  );
  return match ? Number(match[1]) : undefined;
}

/**
 * @param {string} file
 * @returns {Record<string, string>}
 */
function readProperties(file) {
  /** @type {Record<string, string>} */
  const props = {};
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0 && !line.startsWith("#"))
      props[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return props;
}

/**
 * Whether data/ holds a usable format for this node: meta.properties with our node id and a
 * cluster id. Anything else (absent, half-written, another node's) gets wiped and re-formatted;
 * it is test data.
 * @param {string} data
 */
function formatted(data) {
  const meta = join(data, "meta.properties");
  if (!existsSync(meta)) return false;
  const props = readProperties(meta);
  return props["node.id"] === "1" && Boolean(props["cluster.id"]) && props.version === "1";
}

function newClusterId() {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    // Kafka's own Uuid.randomUuid skips ids that start with "-" (a command line would read them as
    // a flag); the all-zero id and AAAAAAAAAAAAAAAAAAAAAQ are reserved.
    if (!id.startsWith("-") && !/^A{21}[AQ]$/.test(id)) return id;
  }
}

/**
 * @param {ReturnType<typeof paths>} p
 * @param {string} classpath
 * @param {(line: string) => void} log
 */
async function format(p, classpath, log) {
  rmSync(p.data, { recursive: true, force: true });
  const clusterId = newClusterId();
  log(`kafka: formatting ${p.data} (cluster id ${clusterId})`);
  // A short-lived tool: the C1 compiler alone starts it faster.
  await run(javaBin(), [
    "-XX:TieredStopAtLevel=1",
    ...JVM_FLAGS,
    "-cp",
    classpath,
    "kafka.tools.StorageTool",
    "format",
    "-t",
    clusterId,
    "-c",
    p.config,
  ]);
}

/**
 * Turns "spawn mvn ENOENT" into a message that names the fix.
 * @template T
 * @param {string} tool
 * @param {string} fix
 * @param {Promise<T>} work
 */
async function needs(tool, fix, work) {
  try {
    return await work;
  } catch (error) {
    if (/** @type {NodeJS.ErrnoException} */ (error).code === "ENOENT") {
      throw new Error(`kafka: ${tool} not found: ${fix}`);
    }
    throw error;
  }
}

/**
 * @param {number} port
 * @param {string} variable
 */
async function refuseIfTaken(port, variable) {
  if (await portOpen(port)) {
    throw new Error(
      `kafka: port ${port} on ${HOST} is in use by a process this tool did not start; stop that process or set ${variable} to a free port`,
    );
  }
}

/**
 * Starts the broker and waits until it serves. Resolves false if the process exited early.
 * @param {ReturnType<typeof paths>} p
 * @param {string} classpath
 * @param {number} port
 */
async function launch(p, classpath, port) {
  // One log per run, so a failure message shows this run's lines; the previous run's is kept.
  if (existsSync(p.log)) renameSync(p.log, `${p.log}.prev`);
  const pid = startDetached({
    command: javaBin(),
    args: [...JVM_FLAGS, "-cp", classpath, "kafka.Kafka", p.config],
    cwd: p.dir,
    logFile: p.log,
    pidFile: p.pidFile,
  });
  try {
    await waitFor(() => serving(port), {
      timeoutMs: START_BUDGET_MS,
      pid,
      intervalMs: 200,
      what: "kafka",
    });
    return true;
  } catch (error) {
    if (!isAlive(pid)) {
      rmSync(p.pidFile, { force: true });
      return false;
    }
    await stopByPidFile(p.pidFile, 5_000); // timed out: leave no half-started broker behind
    throw new Error(
      `kafka: not serving on ${HOST}:${port} after ${START_BUDGET_MS / 1000} s (${error}); last lines of ${p.log}:\n${tail(p.log)}`,
    );
  }
}

/**
 * @param {string} logFile
 * @param {number} port
 * @param {number} controllerPort
 */
function refuseIfBindFailed(logFile, port, controllerPort) {
  const why = tail(logFile);
  if (/BindException|Address already in use/.test(why)) {
    throw new Error(
      `kafka: could not bind ${HOST}:${port} or ${HOST}:${controllerPort}; free them or set KAFKA_PORT / KAFKA_CONTROLLER_PORT. Last lines of ${logFile}:\n${why}`,
    );
  }
}

/**
 * @param {(line: string) => void} log
 * @returns {Promise<{ already: boolean, address: string, ms: number }>}
 */
export async function up(log) {
  const started = Date.now();
  const { port, controllerPort } = ports();
  const p = paths();
  const address = `${HOST}:${port}`;

  const alreadyRunning = async () => {
    const pid = ourPid(p.pidFile);
    if (pid === undefined) return false;
    const running = startedPort(p.config);
    if (running !== undefined && running !== port) {
      throw new Error(
        `kafka: already running on port ${running} (pid ${pid}), but KAFKA_PORT asks for ${port}; run "pnpm brokers down kafka" first or set KAFKA_PORT=${running}`,
      );
    }
    // Ours but not serving yet: another `up` is starting it; give it the same budget.
    try {
      await waitFor(() => serving(port), { timeoutMs: START_BUDGET_MS, pid, what: "kafka" });
    } catch (error) {
      throw new Error(
        `${error} (pid ${pid}, started earlier); run "pnpm brokers down kafka" and up again. Last lines of ${p.log}:\n${tail(p.log)}`,
      );
    }
    return true;
  };

  if (await alreadyRunning()) return { already: true, address, ms: Date.now() - started };

  return withLock(p.lock, { what: "kafka", timeoutMs: START_BUDGET_MS + 60_000 }, async () => {
    if (await alreadyRunning()) return { already: true, address, ms: Date.now() - started };
    await refuseIfTaken(port, "KAFKA_PORT");
    await refuseIfTaken(controllerPort, "KAFKA_CONTROLLER_PORT");
    javaBin(); // fail before any download when there is no java

    const classpath = await needs(
      "mvn",
      "install Maven 3.8 or newer (it fetches Kafka's jars from Maven Central)",
      resolveJars(join(CONFIG_DIR, "pom.xml"), p.libs, log),
    );
    writeFileSync(p.config, serverProperties({ port, controllerPort, data: p.data }));

    const fresh = !formatted(p.data);
    if (fresh) await format(p, classpath, log);
    if (await launch(p, classpath, port))
      return { already: false, address, ms: Date.now() - started };
    if (!fresh) {
      refuseIfBindFailed(p.log, port, controllerPort);
      // Existing data the broker rejects (an unreadable meta.properties, a format from another
      // Kafka version, a metadata log broken by a crash): it is test data, so start over once.
      log(
        `kafka: the broker exited on the existing data in ${p.data}; re-formatting and retrying once`,
      );
      await format(p, classpath, log);
      if (await launch(p, classpath, port))
        return { already: false, address, ms: Date.now() - started };
    }
    refuseIfBindFailed(p.log, port, controllerPort);
    throw new Error(
      `kafka: the broker exited during startup; last lines of ${p.log}:\n${tail(p.log)}`,
    );
  });
}

/** @param {(line: string) => void} log */
export async function down(log) {
  const p = paths();
  const pid = ourPid(p.pidFile);
  if (pid !== undefined) log(`kafka: stopping pid ${pid} (controlled shutdown)`);
  // Controlled shutdown on one node takes a few seconds; the grace covers a slow 2-core box.
  return stopByPidFile(p.pidFile, 30_000);
}

export async function status() {
  const p = paths();
  const pid = ourPid(p.pidFile);
  const port = (pid !== undefined && startedPort(p.config)) || ports().port;
  /** @type {{ running: boolean, address: string, pid?: number, rssMiB?: number }} */
  const s = { running: pid !== undefined, address: `${HOST}:${port}` };
  if (pid !== undefined) {
    s.pid = pid;
    const mem = rssMiB(pid);
    if (mem !== undefined) s.rssMiB = mem;
  }
  return [s];
}

export function env() {
  return { KAFKA_BROKERS: `${HOST}:${ports().port}` };
}
