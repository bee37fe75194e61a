// @ts-check
// Kafka 4.1 (KRaft, one node that is broker and controller) run from its Maven Central jars.
// State lives in stateDir("kafka"): libs/ (jars), data/ (log.dirs), server.properties (written on
// every start from the environment), server.log, kafka.pid, secrets.json (the SASL password) and
// ScramUsers.java (the SCRAM user tool). See registry.mjs for the module shape.
// Two client listeners: PLAINTEXT, and SASL_PLAINTEXT (SCRAM-SHA-256/512 and PLAIN) for the
// credentials tests, whose SCRAM user is created after each start.
import { execFileSync } from "node:child_process";
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

/** The SASL user every start creates (SCRAM) and the JAAS file names (PLAIN). */
export const SASL_USER = "ruststream";

function ports() {
  return {
    port: envPort("KAFKA_PORT", 19092),
    controllerPort: envPort("KAFKA_CONTROLLER_PORT", 19093),
    saslPort: envPort("KAFKA_SASL_PORT", 19094),
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
    secrets: join(dir, "secrets.json"),
    scramTool: join(dir, "ScramUsers.java"),
  };
}

/**
 * The SASL password, made once per machine and kept in the state folder (mode 600), so every clone
 * and test run agrees on it; it only ever guards a loopback port.
 */
function saslPassword() {
  const file = paths().secrets;
  if (!existsSync(file)) {
    writeFileSync(file, JSON.stringify({ password: randomBytes(12).toString("hex") }), {
      mode: 0o600,
    });
  }
  return /** @type {{ password: string }} */ (JSON.parse(readFileSync(file, "utf8"))).password;
}

/** The java to run, checked up front: a detached spawn of a missing binary fails only later. */
export function javaBin() {
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
 * @param {{ port: number, controllerPort: number, saslPort: number, data: string, password: string }} o
 */
function serverProperties({ port, controllerPort, saslPort, data, password }) {
  return `# Written by tooling/brokers/src/kafka.mjs on every start; edit that file, not this one.
process.roles=broker,controller
node.id=1
# A static voter set: format needs no --standalone, and a changed controller port needs no re-format.
controller.quorum.voters=1@${HOST}:${controllerPort}
listeners=PLAINTEXT://${HOST}:${port},SASL_PLAINTEXT://${HOST}:${saslPort},CONTROLLER://${HOST}:${controllerPort}
advertised.listeners=PLAINTEXT://${HOST}:${port},SASL_PLAINTEXT://${HOST}:${saslPort}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT
# The SASL listener, for credentials tests: SCRAM users live in the cluster's metadata (created
# after each start, see ScramUsers.java), the PLAIN user is listed here. No authorizer: any
# authenticated user may do anything, as on the plain listener.
sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${SASL_USER}="${password}";
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

// Creates or updates SCRAM users (both SCRAM mechanisms) through the Admin API of the Java client
// that came with the broker's jars: no Node client can alter SCRAM credentials. Run as a Java
// single-file program (java File.java), so nothing is compiled ahead.
const SCRAM_TOOL = `import java.util.*;
import org.apache.kafka.clients.admin.*;

public class ScramUsers {
  // args: bootstrap servers, then user and password pairs
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", args[0]);
    try (Admin admin = Admin.create(props)) {
      // One request per mechanism: a request may alter each user's credentials only once.
      for (ScramMechanism mechanism : new ScramMechanism[] {ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512}) {
        List<UserScramCredentialAlteration> changes = new ArrayList<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
          changes.add(new UserScramCredentialUpsertion(args[i], new ScramCredentialInfo(mechanism, 4096), args[i + 1]));
        }
        admin.alterUserScramCredentials(changes).all().get();
      }
    }
  }
}
`;

/**
 * Creates (or updates) a SCRAM user on the running broker, synchronously: for a test that needs a
 * user whose password it chose. Takes a second or two (the JVM starts and compiles the tool).
 * @param {string} username
 * @param {string} password
 */
export function addScramUserSync(username, password) {
  const p = paths();
  writeFileSync(p.scramTool, SCRAM_TOOL);
  execFileSync(
    javaBin(),
    [
      "-XX:TieredStopAtLevel=1",
      `-Dlog4j2.configurationFile=${join(CONFIG_DIR, "log4j2.properties")}`,
      "-cp",
      join(p.libs, "*"),
      p.scramTool,
      `${HOST}:${ports().port}`,
      username,
      password,
    ],
    { stdio: ["ignore", "ignore", "pipe"], timeout: 60_000 },
  );
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

/** A random cluster id as Kafka would make one (also used by kafkaCluster.mjs). */
export function newClusterId() {
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
  const { port, controllerPort, saslPort } = ports();
  const p = paths();
  const address = `${HOST}:${port} (SASL ${HOST}:${saslPort})`;
  const properties = () =>
    serverProperties({ port, controllerPort, saslPort, data: p.data, password: saslPassword() });

  const alreadyRunning = async () => {
    const pid = ourPid(p.pidFile);
    if (pid === undefined) return false;
    // Started from an older configuration (this tool changed since): restart it on the new one,
    // keeping its data, so what the tests expect (the SASL listener) is there.
    if (existsSync(p.config) && readFileSync(p.config, "utf8") !== properties()) {
      log(`kafka: pid ${pid} runs an older configuration; restarting it on the current one`);
      await stopByPidFile(p.pidFile, 30_000);
      await waitFor(async () => !(await portOpen(port)), {
        timeoutMs: 10_000,
        intervalMs: 50,
        what: `kafka releasing port ${port}`,
      });
      return false;
    }
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
    await refuseIfTaken(saslPort, "KAFKA_SASL_PORT");
    javaBin(); // fail before any download when there is no java

    const classpath = await needs(
      "mvn",
      "install Maven 3.8 or newer (it fetches Kafka's jars from Maven Central)",
      resolveJars(join(CONFIG_DIR, "pom.xml"), p.libs, log),
    );
    writeFileSync(p.config, properties(), { mode: 0o600 });

    const fresh = !formatted(p.data);
    if (fresh) await format(p, classpath, log);
    if (await launch(p, classpath, port)) {
      addScramUserSync(SASL_USER, saslPassword());
      return { already: false, address, ms: Date.now() - started };
    }
    if (!fresh) {
      refuseIfBindFailed(p.log, port, controllerPort);
      // Existing data the broker rejects (an unreadable meta.properties, a format from another
      // Kafka version, a metadata log broken by a crash): it is test data, so start over once.
      log(
        `kafka: the broker exited on the existing data in ${p.data}; re-formatting and retrying once`,
      );
      await format(p, classpath, log);
      if (await launch(p, classpath, port)) {
        addScramUserSync(SASL_USER, saslPassword());
        return { already: false, address, ms: Date.now() - started };
      }
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

/**
 * Restarts the broker on the same data, for restart tests: a controlled shutdown, or with `hard` a
 * SIGKILL as a crash would. `whileDown` runs once it is down (its port released) and before it
 * starts again, for a test that watches its clients through the outage; it starts again whether
 * `whileDown` resolves or throws (which `restart` then rethrows). Under `up`'s lock, so a global
 * setup running meanwhile cannot start a second broker beside the one this starts.
 * @param {{ hard?: boolean, whileDown?: () => Promise<void> }} [options]
 */
export async function restart(options = {}) {
  const { port } = ports();
  const p = paths();
  await withLock(p.lock, { what: "kafka", timeoutMs: START_BUDGET_MS + 60_000 }, async () => {
    if (options.hard) {
      const pid = ourPid(p.pidFile);
      if (pid !== undefined) process.kill(pid, "SIGKILL");
    }
    await stopByPidFile(p.pidFile, 30_000);
    // The kernel can take a moment to release the listening socket of a killed process.
    await waitFor(async () => !(await portOpen(port)), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: `kafka releasing port ${port}`,
    });
    /** @type {{ error: unknown } | undefined} */
    let failed;
    await options.whileDown?.().catch((error) => {
      failed = { error };
    });
    const classpath = join(p.libs, "*");
    if (!(await launch(p, classpath, port))) {
      throw new Error(
        `kafka: the broker exited while restarting; last lines of ${p.log}:\n${tail(p.log)}`,
      );
    }
    addScramUserSync(SASL_USER, saslPassword());
    if (failed !== undefined) throw failed.error;
  });
}

/**
 * Runs `fn` holding the broker alone: a test that restarts it holds it for its whole body, so two
 * such tests (two files, two projects, two runs) never restart it under each other.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(fn) {
  return withLock(
    join(stateDir("kafka"), "exclusive.lock"),
    { what: "kafka, held by a test that restarts it", timeoutMs: 10 * 60_000 },
    fn,
  );
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
  const { port, saslPort } = ports();
  return {
    KAFKA_BROKERS: `${HOST}:${port}`,
    KAFKA_SASL_BROKERS: `${HOST}:${saslPort}`,
    KAFKA_SASL_USERNAME: SASL_USER,
    KAFKA_SASL_PASSWORD: saslPassword(),
    // The broker's jars (kafka-clients among them) and the java that runs them, for tests that
    // ask the Java client itself (its partitioner).
    KAFKA_LIBS: paths().libs,
    KAFKA_JAVA: javaBin(),
  };
}
