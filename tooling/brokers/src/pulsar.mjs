// @ts-check
// Pulsar 4.0 standalone from Maven Central jars (no tarball, no container): one JVM holding the
// broker and an in-process bookie, metadata in RocksDB. See reference/broker-infra.md part B.
import { lookup } from "node:dns/promises";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveJars } from "./maven.mjs";
import {
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

export const name = "pulsar";

const HERE = join(dirname(fileURLToPath(import.meta.url)), "..", "pulsar");
// Starts took 4-10 s on the 2-core dev box (with a Kafka JVM beside it); the budget leaves room
// for a loaded CI machine before calling a start failed.
const START_BUDGET_MS = 180_000;

function ports() {
  return {
    binary: envPort("PULSAR_PORT", 16650),
    http: envPort("PULSAR_HTTP_PORT", 18080),
    bookie: envPort("PULSAR_BOOKIE_PORT", 13181),
  };
}
/** @typedef {ReturnType<typeof ports>} Ports */

function files() {
  const dir = stateDir("pulsar");
  return {
    pidFile: join(dir, "pulsar.pid"),
    logFile: join(dir, "pulsar.log"),
    // The ports a running broker was started with, so a second `up` checks the right ones.
    portsFile: join(dir, "ports.json"),
    lockFile: join(dir, "up.lock"),
  };
}

/** @returns {Ports | undefined} */
function recordedPorts() {
  try {
    return JSON.parse(readFileSync(files().portsFile, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * @param {number} httpPort
 * @param {string} path
 */
async function getJson(httpPort, path) {
  const response = await fetch(`http://127.0.0.1:${httpPort}${path}`, {
    signal: AbortSignal.timeout(2000),
  });
  if (!response.ok) return undefined;
  return response.json();
}

/**
 * Ready means what a client needs: the cluster and public/default exist (the starter creates them
 * only after the broker is up) and the binary port takes connections.
 * @param {Ports} p
 */
async function ready(p) {
  const clusters = await getJson(p.http, "/admin/v2/clusters");
  if (!Array.isArray(clusters) || !clusters.includes("standalone")) return false;
  const namespaces = await getJson(p.http, "/admin/v2/namespaces/public");
  if (!Array.isArray(namespaces) || !namespaces.includes("public/default")) return false;
  return portOpen(p.binary);
}

/** The JVM; JAVA_HOME wins so a machine with several JDKs can pick 17+. */
function javaCommand() {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, "bin", "java") : "java";
}

/**
 * Heap and direct memory sized for a 2-core test box (bin/pulsar's 2g/4g defaults are for servers),
 * plus the module opens bin/pulsar passes on Java 17 for Netty, BookKeeper and the metrics code.
 */
function jvmFlags() {
  return [
    "-Xms256m",
    "-Xmx1g",
    "-XX:MaxDirectMemorySize=768m",
    "-XX:+UseG1GC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.net.preferIPv4Stack=true",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dio.netty.leakDetection.level=disabled",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.util.zip=ALL-UNNAMED",
    "--add-opens=java.base/sun.net=ALL-UNNAMED",
    "--add-opens=java.base/jdk.internal.platform=ALL-UNNAMED",
    "--add-opens=java.management/sun.management=ALL-UNNAMED",
    "--add-opens=jdk.management/com.sun.management.internal=ALL-UNNAMED",
    `-Dlog4j2.configurationFile=${join(HERE, "log4j2.properties")}`,
    "-Dlog4j2.is.webapp=false",
    // Pulsar stops log4j itself once the broker has closed; log4j's own hook would stop it first
    // and lose the shutdown lines.
    "-Dlog4j.shutdownHookEnabled=false",
  ];
}

/**
 * The repo's standalone.conf with this run's ports, written next to the data it belongs to.
 * @param {Ports} p
 * @param {string} workDir
 */
function writeConf(p, workDir) {
  const base = readFileSync(join(HERE, "standalone.conf"), "utf8");
  const conf = base
    .replace(/^brokerServicePort=.*$/m, `brokerServicePort=${p.binary}`)
    .replace(/^webServicePort=.*$/m, `webServicePort=${p.http}`);
  const file = join(workDir, "standalone.conf");
  writeFileSync(file, conf);
  return file;
}

/**
 * Throws naming the port and its variable when something else listens on one of ours.
 * @param {Ports} p
 */
async function refuseTakenPorts(p) {
  /** @type {[number, string][]} */
  const wanted = [
    [p.binary, "PULSAR_PORT"],
    [p.http, "PULSAR_HTTP_PORT"],
    [p.bookie, "PULSAR_BOOKIE_PORT"],
  ];
  for (const [port, variable] of wanted) {
    if (await portOpen(port)) {
      throw new Error(
        `pulsar: port ${port} on 127.0.0.1 is in use by a process this tool did not start; ` +
          `stop it, or set ${variable} to a free port`,
      );
    }
  }
}

/** BookKeeper and the broker resolve the local hostname; a failure there reads as a hang or NPE. */
async function hostnameHint() {
  const host = hostname();
  try {
    await lookup(host);
    return "";
  } catch {
    return `\nhint: the hostname "${host}" does not resolve; add "127.0.0.1 ${host}" to /etc/hosts`;
  }
}

/** @param {(line: string) => void} log */
export async function up(log) {
  return withLock(files().lockFile, { what: "pulsar", timeoutMs: START_BUDGET_MS + 30_000 }, () =>
    upLocked(log),
  );
}

/** @param {(line: string) => void} log */
async function upLocked(log) {
  const started = Date.now();
  const want = ports();
  const address = `pulsar://127.0.0.1:${want.binary}`;
  const { pidFile, logFile, portsFile } = files();

  const pid = runningPid(pidFile);
  if (pid !== undefined) {
    const have = recordedPorts() ?? want;
    if (have.binary !== want.binary || have.http !== want.http || have.bookie !== want.bookie) {
      throw new Error(
        `pulsar: already running (pid ${pid}) on ports ${have.binary}/${have.http}/${have.bookie}, ` +
          `not the requested ${want.binary}/${want.http}/${want.bookie}; run \`pnpm brokers down pulsar\` first`,
      );
    }
    // Usually answers at once; waiting covers a concurrent `up` whose broker is still starting.
    try {
      await waitFor(() => ready(have), {
        timeoutMs: START_BUDGET_MS,
        pid,
        intervalMs: 500,
        what: "pulsar",
      });
    } catch (error) {
      throw new Error(
        `${/** @type {Error} */ (error).message} (pid ${pid} runs but does not answer; ` +
          `\`pnpm brokers down pulsar\` and retry)\n--- ${logFile} ---\n${tail(logFile)}`,
      );
    }
    return { already: true, address, ms: Date.now() - started };
  }

  await refuseTakenPorts(want);
  const classpath = await resolveJars(join(HERE, "pom.xml"), stateDir("pulsar", "libs"), log);

  // Data need not survive a restart, and a leftover data/standalone/zookeeper folder would silently
  // switch the starter to ZooKeeper mode: always start from an empty folder.
  const workDir = join(stateDir("pulsar"), "work");
  rmSync(workDir, { recursive: true, force: true });
  stateDir("pulsar", "work");
  const conf = writeConf(want, workDir);
  rmSync(logFile, { force: true });

  const newPid = startDetached({
    command: javaCommand(),
    args: [
      ...jvmFlags(),
      "-cp",
      classpath,
      "org.apache.pulsar.PulsarStandaloneStarter",
      "--config",
      conf,
      "--no-functions-worker",
      "--no-stream-storage",
      "--metadata-dir",
      join(workDir, "metadata"),
      "--bookkeeper-dir",
      join(workDir, "bookkeeper"),
      "--bookkeeper-port",
      String(want.bookie),
      "--advertised-address",
      "127.0.0.1",
    ],
    cwd: workDir,
    logFile,
    pidFile,
  });
  writeFileSync(portsFile, JSON.stringify(want));
  log(`pulsar: starting (pid ${newPid}, log ${logFile})`);

  try {
    await waitFor(() => ready(want), {
      timeoutMs: START_BUDGET_MS,
      pid: newPid,
      intervalMs: 500,
      what: "pulsar",
    });
  } catch (error) {
    const message = `${/** @type {Error} */ (error).message}\n--- ${logFile} ---\n${tail(logFile)}${await hostnameHint()}`;
    await stopByPidFile(pidFile, 10_000);
    rmSync(portsFile, { force: true });
    throw new Error(message);
  }
  return { already: false, address, ms: Date.now() - started };
}

/** @param {(line: string) => void} log */
export async function down(log) {
  const { pidFile, portsFile } = files();
  if (runningPid(pidFile) !== undefined)
    log("pulsar: stopping (the broker closes, then the bookie)");
  const stopped = await stopByPidFile(pidFile, 30_000);
  if (existsSync(portsFile)) rmSync(portsFile, { force: true });
  return stopped;
}

export async function status() {
  const pid = runningPid(files().pidFile);
  const p = (pid !== undefined && recordedPorts()) || ports();
  const address = `pulsar://127.0.0.1:${p.binary}`;
  if (pid === undefined) return [{ running: false, address }];
  return [{ running: true, address, pid, rssMiB: rssMiB(pid) }];
}

export function env() {
  const p = ports();
  return {
    PULSAR_URL: `pulsar://127.0.0.1:${p.binary}`,
    PULSAR_ADMIN_URL: `http://127.0.0.1:${p.http}`,
  };
}
