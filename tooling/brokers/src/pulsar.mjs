// @ts-check
// Pulsar 4.0 standalone from Maven Central jars (no tarball, no container): one JVM holding the
// broker and an in-process bookie, metadata in RocksDB. See reference/broker-infra.md part B.
import { createHash, createHmac, randomBytes } from "node:crypto";
import { lookup } from "node:dns/promises";
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveJars } from "./maven.mjs";
import {
  portOpen,
  rssMiB,
  runningPid,
  sleep,
  startDetached,
  stopByPidFile,
  tail,
  waitFor,
  withLock,
} from "./process.mjs";
import { envPort, stateDir } from "./state.mjs";
import { ensureTestCertificates, testCertificates } from "./testCa.mjs";

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
    tls: envPort("PULSAR_TLS_PORT", 16651),
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

/** Where the TLS material and the token's key live: made once per machine, kept across restarts. */
function securityFiles() {
  const dir = stateDir("pulsar", "security");
  return {
    dir,
    ...testCertificates(dir),
    secretKey: join(dir, "token-secret.key"),
    token: join(dir, "token.jwt"),
  };
}

/** @param {Buffer | string} data */
const base64url = (data) => Buffer.from(data).toString("base64url");

/**
 * A CA and a server certificate for 127.0.0.1 (the TLS port, testCa.mjs), a secret key (32 random
 * bytes, which the broker reads as HS256's key) and a token it signed for the role `ruststream`.
 * Only ever guards loopback ports.
 */
async function ensureSecurity() {
  const f = securityFiles();
  if (!existsSync(f.secretKey)) writeFileSync(f.secretKey, randomBytes(32), { mode: 0o600 });
  if (!existsSync(f.token)) {
    const head = base64url(JSON.stringify({ alg: "HS256" }));
    const body = base64url(JSON.stringify({ sub: "ruststream" }));
    const signature = createHmac("sha256", readFileSync(f.secretKey))
      .update(`${head}.${body}`)
      .digest("base64url");
    writeFileSync(f.token, `${head}.${body}.${signature}`, { mode: 0o600 });
  }
  await ensureTestCertificates(f.dir, "ruststream pulsar test CA");
}

/** @returns {(Ports & { conf?: string; keptData?: boolean }) | undefined} */
function recorded() {
  try {
    return JSON.parse(readFileSync(files().portsFile, "utf8"));
  } catch {
    return undefined;
  }
}

/** @returns {Ports | undefined} */
function recordedPorts() {
  const r = recorded();
  if (r === undefined) return undefined;
  // A broker started before the TLS port existed took none: its restart (another configuration)
  // takes the one asked for.
  return { binary: r.binary, http: r.http, bookie: r.bookie, tls: r.tls ?? ports().tls };
}

/** The fingerprint of the configuration the running broker was started with. */
const recordedConf = () => recorded()?.conf;

/**
 * Whether the running broker was started by `restart` on the data a previous one left. Such a
 * standalone serves, but its broker's BookKeeper clients now and then see no bookie at all
 * ("Not enough non-faulty bookies available", `allBookies []`) for seconds at a time, minutes
 * after the restart (seen here after the chaos suite's hard restarts: topics failed to open in a
 * later test run). Fine for the restart test or scenario that asked for it; not for the next
 * suite, so `up` starts such a broker again from an empty folder.
 */
const restartedOnKeptData = () => recorded()?.keptData === true;

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
  return (await portOpen(p.binary)) && portOpen(p.tls);
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
 * The repo's standalone.conf with this run's ports and the paths of the security material: token
 * authentication (a client without a token gets the anonymous role, authorization is off, so the
 * plain tests need none; a token the key did not sign is refused) and a TLS port.
 * @param {Ports} p
 */
function confText(p) {
  const f = securityFiles();
  const base = readFileSync(join(HERE, "standalone.conf"), "utf8");
  return `${base
    .replace(/^brokerServicePort=.*$/m, `brokerServicePort=${p.binary}`)
    .replace(/^webServicePort=.*$/m, `webServicePort=${p.http}`)}
### security (written by tooling/brokers/src/pulsar.mjs) ###
authenticationEnabled=true
authenticationProviders=org.apache.pulsar.broker.authentication.AuthenticationProviderToken
tokenSecretKey=file://${f.secretKey}
anonymousUserRole=anonymous
authorizationEnabled=false
brokerServicePortTls=${p.tls}
tlsCertificateFilePath=${f.cert}
tlsKeyFilePath=${f.key}
tlsTrustCertsFilePath=${f.ca}
`;
}

/** What tells two configurations apart, so a running broker started with another one is restarted. */
const fingerprint = (/** @type {string} */ text) =>
  createHash("sha256").update(text).digest("hex").slice(0, 16);

/**
 * @param {string} workDir
 * @param {string} text
 */
function writeConf(workDir, text) {
  const file = join(workDir, "standalone.conf");
  writeFileSync(file, text);
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
    [p.tls, "PULSAR_TLS_PORT"],
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

/** The working folder: the configuration written at `up`, the metadata store and the bookie's data. */
const workDirOf = () => join(stateDir("pulsar"), "work");

/**
 * Starts the standalone on `workDir`: the same command line for `up` (on a folder it just emptied)
 * and `restart` (on the folder the killed broker left), so a restart is the same broker again.
 * @param {string} classpath
 * @param {string} workDir
 * @param {string} confFile
 * @param {Ports} p
 * @returns {number} the pid
 */
function launch(classpath, workDir, confFile, p) {
  const { pidFile, logFile } = files();
  return startDetached({
    command: javaCommand(),
    args: [
      ...jvmFlags(),
      "-cp",
      classpath,
      "org.apache.pulsar.PulsarStandaloneStarter",
      "--config",
      confFile,
      "--no-functions-worker",
      "--no-stream-storage",
      "--metadata-dir",
      join(workDir, "metadata"),
      "--bookkeeper-dir",
      join(workDir, "bookkeeper"),
      "--bookkeeper-port",
      String(p.bookie),
      "--advertised-address",
      "127.0.0.1",
    ],
    cwd: workDir,
    logFile,
    pidFile,
  });
}

/**
 * Waits until the broker started as `pid` serves; on failure stops it and throws with its log.
 * @param {Ports} p
 * @param {number} pid
 */
async function waitStarted(p, pid) {
  const { pidFile, logFile, portsFile } = files();
  try {
    await waitFor(() => ready(p), {
      timeoutMs: START_BUDGET_MS,
      pid,
      intervalMs: 500,
      what: "pulsar",
    });
  } catch (error) {
    const message = `${/** @type {Error} */ (error).message}\n--- ${logFile} ---\n${tail(logFile)}${await hostnameHint()}`;
    await stopByPidFile(pidFile, 10_000);
    rmSync(portsFile, { force: true });
    throw new Error(message);
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
  await ensureSecurity();
  const conf = confText(want);
  const wantConf = fingerprint(conf);

  const pid = runningPid(pidFile);
  if (pid !== undefined) {
    const have = recordedPorts() ?? want;
    const samePorts =
      have.binary === want.binary &&
      have.http === want.http &&
      have.bookie === want.bookie &&
      have.tls === want.tls;
    if (!samePorts) {
      throw new Error(
        `pulsar: already running (pid ${pid}) on ports ${have.binary}/${have.http}/${have.bookie}/${have.tls}, ` +
          `not the requested ${want.binary}/${want.http}/${want.bookie}/${want.tls}; run \`pnpm brokers down pulsar\` first`,
      );
    }
    if (recordedConf() === wantConf && !restartedOnKeptData()) {
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
    // Started with another configuration (an older checkout), or by `restart` on kept data (above):
    // start it again from an empty folder like every `up` (only `restart` keeps the data).
    log(
      restartedOnKeptData()
        ? `pulsar: running (pid ${pid}) on the data of a restart; starting it again from an empty folder`
        : `pulsar: running (pid ${pid}) with another configuration; restarting it`,
    );
    await stopByPidFile(pidFile, 30_000);
    rmSync(portsFile, { force: true });
  }

  await refuseTakenPorts(want);
  const classpath = await resolveJars(join(HERE, "pom.xml"), stateDir("pulsar", "libs"), log);

  // A start by `up` need not keep data, and a leftover data/standalone/zookeeper folder would
  // silently switch the starter to ZooKeeper mode: `up` always starts from an empty folder. Only
  // `restart` starts on the folder a running broker left, its topics, backlogs and cursors with it.
  const workDir = workDirOf();
  rmSync(workDir, { recursive: true, force: true });
  stateDir("pulsar", "work");
  const confFile = writeConf(workDir, conf);
  rmSync(logFile, { force: true });

  const newPid = launch(classpath, workDir, confFile, want);
  writeFileSync(portsFile, JSON.stringify({ ...want, conf: wantConf }));
  log(`pulsar: starting (pid ${newPid}, log ${logFile})`);

  await waitStarted(want, newPid);
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

/**
 * Restarts the running standalone on its data, for restart tests and the chaos suite: a clean stop
 * (SIGTERM: the broker closes its topics, then the bookie), or with `hard` a SIGKILL as a crash
 * would, then the same command line on the same working folder, its configuration, metadata store
 * (RocksDB) and bookie journal and ledgers kept, so topics, backlogs and subscription cursors
 * survive. A SIGKILL loses nothing the bookie confirmed (its journal writes are in the page cache,
 * which outlives the process); a cursor comes back at the position it last wrote, which the
 * broker writes at most once a second (`managedLedgerDefaultMarkDeleteRateLimit`), so what was
 * acknowledged in the last second before a hard kill may be delivered again. Under `up`'s lock, so
 * a global setup running meanwhile waits for it instead of finding no broker and starting one on
 * an empty folder; a test that restarts it runs inside `exclusive(fn)`. Resolves once it serves
 * again (the same readiness check as `up`) and writes steadily (`steadilyWritable`), which a hard
 * restart now and then does not (see below): then it is stopped cleanly and started again.
 * `whileDown` runs once it is down (its ports released) and before it starts again, for a test
 * that watches its clients through the outage; it starts again whether `whileDown` resolves or
 * throws (which `restart` then rethrows).
 * @param {{ hard?: boolean, whileDown?: () => Promise<void> }} [options]
 */
export async function restart(options = {}) {
  const { pidFile, logFile, lockFile, portsFile } = files();
  await withLock(lockFile, { what: "pulsar", timeoutMs: START_BUDGET_MS + 30_000 }, async () => {
    const pid = runningPid(pidFile);
    const p = recordedPorts();
    const workDir = workDirOf();
    const confFile = join(workDir, "standalone.conf");
    if (pid === undefined || p === undefined || !existsSync(confFile)) {
      throw new Error(
        "pulsar: not running, so there is nothing to restart; start it with `pnpm brokers up pulsar` first",
      );
    }
    if (options.hard) process.kill(pid, "SIGKILL");
    /** @type {{ error: unknown } | undefined} */
    let failed;
    const whileDown = async () =>
      options.whileDown?.().catch((error) => {
        failed = { error };
      });
    await startAgainOnData(p, workDir, confFile, options.hard ? "SIGKILL" : "SIGTERM", whileDown);
    writeFileSync(portsFile, JSON.stringify({ ...recorded(), keptData: true }));
    const writes = await steadilyWritable(p);
    if (failed !== undefined) throw failed.error;
    if (writes) return;
    // Seen about one hard restart in six: the broker's BookKeeper clients do not learn that the
    // bookie registered again (placement finds `allBookies []`), so some ledger creations and
    // writes fail, for minutes, while reads work (Pulsar's docs advise ZooKeeper over the RocksDB
    // metadata store for a standalone restarted on its data). A clean stop and start on the same
    // data clears it; what the crash left (the recovered ledgers and cursors) is what the second
    // start opens.
    const why = `pulsar: the standalone restarted on its data did not write steadily within ${WRITABLE_BUDGET_MS / 1000} s (its BookKeeper clients see no bookie); stopping it cleanly and starting it again on the same data`;
    process.stderr.write(`${why}\n`);
    await startAgainOnData(p, workDir, confFile, "SIGTERM, not writable after the restart");
    if (await steadilyWritable(p)) return;
    throw new Error(
      `pulsar: restarted twice on its data and still cannot write (the broker's health check or a new topic fails)\n--- ${logFile} ---\n${tail(logFile)}`,
    );
  });
}

/**
 * Stops the running standalone (SIGTERM; a no-op on one already killed), waits until the kernel
 * has released its ports, runs `whileDown`, and starts it with `up`'s command line on the same
 * working folder.
 * @param {Ports} p
 * @param {string} workDir
 * @param {string} confFile
 * @param {string} how what stopped it, for the log
 * @param {() => Promise<void>} [whileDown]
 */
async function startAgainOnData(p, workDir, confFile, how, whileDown) {
  const { pidFile, logFile } = files();
  await stopByPidFile(pidFile, 30_000);
  // The kernel can take a moment to release the listening sockets of a killed process.
  for (const port of [p.binary, p.http, p.bookie, p.tls]) {
    await waitFor(async () => !(await portOpen(port)), {
      timeoutMs: 10_000,
      intervalMs: 50,
      what: `pulsar releasing port ${port}`,
    });
  }
  await whileDown?.();
  appendFileSync(
    logFile,
    `\n### ${new Date().toISOString()} restarted (${how}) by tooling/brokers on its data ###\n`,
  );
  // The jars `up` resolved (a running broker means they are there): no Maven on a restart.
  const newPid = launch(`${stateDir("pulsar", "libs")}/*`, workDir, confFile, p);
  await waitStarted(p, newPid);
}

/** How long a restarted standalone gets to write steadily (`steadilyWritable`). */
const WRITABLE_BUDGET_MS = 30_000;

/**
 * Whether the broker writes: Pulsar's own health check on both heartbeat namespaces (a message
 * produced and read back), and topics opened in public/default, each of which creates a ledger.
 * Serving the admin API and the ports, as `ready` checks, does not show that. Several topics,
 * because a broken restart fails some ledger creations and not others.
 * @param {Ports} p
 */
async function writable(p) {
  const base = `http://127.0.0.1:${p.http}/admin/v2`;
  /** @param {string} path @param {string} [method] */
  const ok = async (path, method = "GET") =>
    (
      await fetch(`${base}${path}`, { method, signal: AbortSignal.timeout(10_000) }).catch(
        () => undefined,
      )
    )?.ok === true;
  for (const version of ["V1", "V2"]) {
    if (!(await ok(`/brokers/health?topicVersion=${version}`))) return false;
  }
  for (let i = 0; i < 3; i++) {
    const topic = `/persistent/public/default/restart-probe-${randomBytes(6).toString("hex")}`;
    const opened = (await ok(topic, "PUT")) && (await ok(`${topic}/stats`));
    await ok(`${topic}?force=true`, "DELETE");
    if (!opened) return false;
  }
  return true;
}

/**
 * Whether the broker passes `writable` three times in a row, a second apart, within the budget:
 * a broken restart passes now and then.
 * @param {Ports} p
 */
async function steadilyWritable(p) {
  const deadline = Date.now() + WRITABLE_BUDGET_MS;
  let inARow = 0;
  while (Date.now() < deadline) {
    inARow = (await writable(p)) ? inARow + 1 : 0;
    if (inARow === 3) return true;
    await sleep(1000);
  }
  return false;
}

/**
 * Runs `fn` holding the standalone alone: a test that restarts it holds it for its whole body, so
 * two such tests (two files, two projects, two runs) never restart it under each other. Tests that
 * only use the broker do not take it: they see a restart as any client would, a lost connection.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(fn) {
  return withLock(
    join(stateDir("pulsar"), "exclusive.lock"),
    { what: "pulsar, held by a test that restarts it", timeoutMs: 10 * 60_000 },
    fn,
  );
}

export async function status() {
  const pid = runningPid(files().pidFile);
  const p = (pid !== undefined && recordedPorts()) || ports();
  const address = `pulsar://127.0.0.1:${p.binary}`;
  if (pid === undefined) return [{ running: false, address }];
  return [{ running: true, address, pid, rssMiB: rssMiB(pid) }];
}

/**
 * The variables tests read. The token URL is the plain port: authentication is on for every
 * listener, and a client without a token is let in as the anonymous role.
 */
export function env() {
  const p = ports();
  const f = securityFiles();
  return {
    PULSAR_URL: `pulsar://127.0.0.1:${p.binary}`,
    PULSAR_ADMIN_URL: `http://127.0.0.1:${p.http}`,
    PULSAR_TOKEN_URL: `pulsar://127.0.0.1:${p.binary}`,
    PULSAR_TOKEN: existsSync(f.token) ? readFileSync(f.token, "utf8") : "",
    // The key the broker checks tokens with, for tests that sign tokens of their own.
    PULSAR_TOKEN_KEY: f.secretKey,
    PULSAR_TLS_URL: `pulsar+ssl://127.0.0.1:${p.tls}`,
    PULSAR_TLS_CA: f.ca,
    PULSAR_LIBS: stateDir("pulsar", "libs"),
  };
}
