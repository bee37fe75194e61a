// @ts-check
// RabbitMQ 3.10 from Debian's rabbitmq-server (Erlang 25), one node started by hand on 127.0.0.1
// (rabbitmqNode.mjs: never the package's system service, never its /var/lib/rabbitmq or
// /etc/rabbitmq). The node, its Erlang port mapper (epmd) and its distribution port are ours, on
// ports of their own, so nothing else on the machine that speaks Erlang (or another RabbitMQ) meets
// them. Plain AMQP, AMQP over TLS (a CA and a server certificate made at first start, testCa.mjs),
// the management API (the tests read queues and connections through it) and the consistent-hash
// exchange; a user with a password made once per machine; logging in by a client certificate the CA
// signed (SASL EXTERNAL), as the user the certificate's common name names.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  secrets,
  stopNode,
  USER,
} from "./rabbitmqNode.mjs";
import { envPort, stateDir } from "./state.mjs";
import { ensureClientCertificate, ensureTestCertificates, testCertificates } from "./testCa.mjs";

export const name = "rabbitmq";
export { ensureInstalled, secrets, USER };

/** A cold start on 2 cores takes 5-8 s; a node replaying a large queue index takes longer. */
const START_BUDGET_MS = 90_000;

/**
 * Every port the node uses, each from its variable. RabbitMQ's own defaults (5672, 5671, 15672,
 * 25672, epmd's 4369) are left to whatever else runs here; these sit in 15771-15780 (the last five
 * the CLI's own distribution ports), a range no other broker of this tool uses.
 */
function ports() {
  return {
    amqp: { port: envPort("RABBITMQ_PORT", 15772), variable: "RABBITMQ_PORT", what: "AMQP" },
    tls: {
      port: envPort("RABBITMQ_TLS_PORT", 15771),
      variable: "RABBITMQ_TLS_PORT",
      what: "AMQPS",
    },
    management: {
      port: envPort("RABBITMQ_MANAGEMENT_PORT", 15773),
      variable: "RABBITMQ_MANAGEMENT_PORT",
      what: "management API",
    },
    dist: {
      port: envPort("RABBITMQ_DIST_PORT", 15774),
      variable: "RABBITMQ_DIST_PORT",
      what: "Erlang distribution",
    },
    epmd: {
      port: envPort("RABBITMQ_EPMD_PORT", 15775),
      variable: "RABBITMQ_EPMD_PORT",
      what: "epmd",
    },
  };
}

/** The CLI's distribution ports (rabbitmqctl is an Erlang node too): five from RABBITMQ_CTL_PORT. */
function ctlPorts() {
  const min = envPort("RABBITMQ_CTL_PORT", 15776);
  return { min, max: min + 4 };
}

/** The node: its name (`localhost` resolves everywhere, so no host name is looked up), folders, ports. */
function theNode() {
  const p = ports();
  return {
    node: "ruststream@localhost",
    dir: stateDir("rabbitmq"),
    home: stateDir("rabbitmq", "home"),
    data: stateDir("rabbitmq", "data"),
    logs: stateDir("rabbitmq", "log"),
    amqpPort: p.amqp.port,
    managementPort: p.management.port,
    distPort: p.dist.port,
    epmdPort: p.epmd.port,
  };
}

function paths() {
  const dir = stateDir("rabbitmq");
  return {
    dir,
    ...nodeFiles(theNode()),
    epmdPidFile: join(dir, "epmd.pid"),
    epmdLog: join(dir, "epmd.log"),
    fingerprint: join(dir, "config.sha256"),
    lock: join(dir, "up.lock"),
    tlsDir: stateDir("rabbitmq", "tls-certs"),
    /** The settings a running node took (`applyRuntimeSettings`), and which VM took them. */
    runtimeRecord: join(dir, "runtime.json"),
  };
}

const tlsFiles = () => testCertificates(paths().tlsDir);

/**
 * Logging in by client certificate (SASL EXTERNAL, from the rabbitmq_auth_mechanism_ssl plugin): a
 * client whose certificate the CA signed logs in as the user its common name names, with no
 * password. A node takes these while it runs, so they are applied to one that runs without them
 * (started by an older checkout of these tools) instead of restarting the node every test shares:
 * they are not in the configuration's fingerprint.
 */
const certificateLogin = {
  plugin: "rabbitmq_auth_mechanism_ssl",
  mechanisms: ["PLAIN", "AMQPLAIN", "EXTERNAL"],
  loginFrom: "common_name",
};

/** The runtime settings as rabbitmq.conf lines, for a start. */
const runtimeConfigLines = () => [
  ...certificateLogin.mechanisms.map((m, i) => `auth_mechanisms.${i + 1} = ${m}`),
  `ssl_cert_login_from = ${certificateLogin.loginFrom}`,
];

/** The same settings for a running node: the application environment they set. */
const runtimeEval = () =>
  `application:set_env(rabbit, auth_mechanisms, [${certificateLogin.mechanisms.map((m) => `'${m}'`).join(", ")}]), application:set_env(rabbit, ssl_cert_login_from, ${certificateLogin.loginFrom}).`;

/** What the runtime record holds: the settings, and the VM that took them. */
const runtimeRecordOf = (/** @type {number | undefined} */ beam) =>
  JSON.stringify({ beam, settings: fingerprintOf(`${certificateLogin.plugin}\n${runtimeEval()}`) });

/**
 * Gives the running node the runtime settings unless this VM took them already: the plugin
 * enabled (`rabbitmq-plugins enable`, which also writes it into the plugins file) and the
 * application environment set (`rabbitmqctl eval`). Neither restarts the node.
 */
async function applyRuntimeSettings() {
  const p = paths();
  const record = runtimeRecordOf(ourBeam());
  if (existsSync(p.runtimeRecord) && readFileSync(p.runtimeRecord, "utf8") === record) return;
  await runCli(theNode(), "rabbitmq-plugins", ["enable", certificateLogin.plugin], ctlPorts());
  await runCli(theNode(), "rabbitmqctl", ["eval", runtimeEval()], ctlPorts());
  writeFileSync(p.runtimeRecord, record);
}

/**
 * rabbitmq.conf's lines a change of which needs a restart: listeners on loopback only, TLS, then
 * what every node has. Its fingerprint says whether a running node has them.
 */
function startConfigText() {
  const p = ports();
  const f = tlsFiles();
  return `${[
    `listeners.tcp.default = ${HOST}:${p.amqp.port}`,
    `listeners.ssl.default = ${HOST}:${p.tls.port}`,
    `ssl_options.cacertfile = ${f.ca}`,
    `ssl_options.certfile = ${f.cert}`,
    `ssl_options.keyfile = ${f.key}`,
    // A client may present a certificate (signed by the CA) or none; its password still decides.
    "ssl_options.verify = verify_peer",
    "ssl_options.fail_if_no_peer_cert = false",
    ...commonConfigLines(p.management.port),
  ].join("\n")}\n`;
}

/** rabbitmq.conf as written for a start: the lines above and the runtime settings. */
const configText = () => `${startConfigText()}${runtimeConfigLines().join("\n")}\n`;

const fingerprintOf = (/** @type {string} */ text) =>
  createHash("sha256").update(text).digest("hex");

const ourBeam = () => beamOf(theNode());

/**
 * The management API's answer for a path, as JSON.
 * @param {string} path e.g. `/api/queues/%2F/orders`
 * @param {RequestInit} [init]
 */
export function management(path, init = {}) {
  return managementAt(ports().management.port, path, init);
}

/**
 * Whether the node `up` started serves: the management API names our node and its VM's pid, and a
 * real AMQP connection (plain and TLS, with the user's password) opens a channel.
 */
async function serves() {
  if (!(await nodeRuns(theNode()))) return false;
  for (const url of [amqpUrl(), amqpsUrl()])
    await logIn(url, { ca: [readFileSync(tlsFiles().ca)] });
  return true;
}

/** Refuses, naming the variable, when something `up` did not start holds one of the ports. */
async function refuseForeignPorts(/** @type {boolean} */ epmdOurs) {
  for (const [key, port] of Object.entries(ports())) {
    if (key === "epmd" && epmdOurs) continue;
    if (await portOpen(port.port)) {
      throw new Error(
        `rabbitmq: port ${port.port} (${port.what}) is held by a process these tools did not start; stop it or set ${port.variable} to a free port`,
      );
    }
  }
}

/** Starts the node on its data; resolves once it serves, or throws with the log's tail. */
async function launch() {
  const p = paths();
  await ensureEpmd({ port: ports().epmd.port, pidFile: p.epmdPidFile, logFile: p.epmdLog });
  await ensureTestCertificates(p.tlsDir, "ruststream test CA");
  rmSync(p.runtimeRecord, { force: true });
  const started = launchNode(theNode(), configText(), [certificateLogin.plugin]);
  try {
    await waitFor(serves, {
      timeoutMs: START_BUDGET_MS,
      pid: started,
      intervalMs: 500,
      what: `rabbitmq on ${HOST}:${ports().amqp.port}`,
    });
  } catch (error) {
    if (isAlive(started)) await stopNode(theNode(), true);
    throw new Error(`${/** @type {Error} */ (error).message}\n${logTails(theNode())}`);
  }
  writeFileSync(p.fingerprint, fingerprintOf(startConfigText()));
  writeFileSync(p.runtimeRecord, runtimeRecordOf(ourBeam()));
}

/** @param {(line: string) => void} log */
export async function up(log) {
  const begin = Date.now();
  await ensureInstalled(log);
  const p = paths();
  return withLock(p.lock, { what: "rabbitmq", timeoutMs: START_BUDGET_MS + 60_000 }, async () => {
    if (ourBeam() !== undefined && (await serves().catch(() => false))) {
      const recorded = existsSync(p.fingerprint) ? readFileSync(p.fingerprint, "utf8") : "";
      if (recorded === fingerprintOf(startConfigText())) {
        await applyRuntimeSettings();
        return { already: true, address: amqpUrlShown(), ms: Date.now() - begin };
      }
      log("[brokers] rabbitmq runs on an older configuration: restarting it on the current one");
      await stopNode(theNode(), false);
    } else if (runningPid(p.pidFile) !== undefined) {
      await stopNode(theNode(), false);
    }
    await refuseForeignPorts(runningPid(p.epmdPidFile) !== undefined);
    await launch();
    return { already: false, address: amqpUrlShown(), ms: Date.now() - begin };
  });
}

/** @param {(line: string) => void} _log */
export async function down(_log) {
  const stopped = await stopNode(theNode(), false);
  const epmd = await stopByPidFile(paths().epmdPidFile);
  return stopped || epmd;
}

/**
 * Stops the node (SIGKILL with `hard`, as a crash would) and starts it again on its data: durable
 * queues and their persistent messages survive. `whileDown` runs once it is down and before it
 * starts again, which it does whatever `whileDown` does (a throw is rethrown after the start).
 * Under `up`'s lock, so a global setup meanwhile waits instead of starting a second node.
 * @param {{ hard?: boolean, whileDown?: () => Promise<void> }} [options]
 */
export async function restart(options = {}) {
  const p = paths();
  await withLock(p.lock, { what: "rabbitmq", timeoutMs: START_BUDGET_MS + 60_000 }, async () => {
    await stopNode(theNode(), options.hard === true);
    /** @type {{ error: unknown } | undefined} */
    let failed;
    await options.whileDown?.().catch((error) => {
      failed = { error };
    });
    await launch();
    if (failed !== undefined) throw failed.error;
  });
}

/** The tails of the node's start log and its own log, for a test's failure message. */
export const logTail = () => logTails(theNode());

/**
 * Runs `fn` with the node to itself: a test that restarts it holds it for its whole body.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(fn) {
  return withLock(
    join(paths().dir, "exclusive.lock"),
    { what: "rabbitmq, held by a test that restarts it", timeoutMs: 10 * 60_000 },
    fn,
  );
}

export async function status() {
  const beam = ourBeam();
  const running = beam !== undefined && (await serves().catch(() => false));
  return [
    {
      running,
      address: amqpUrlShown(),
      ...(running && beam !== undefined ? { pid: beam, rssMiB: rssMiB(beam) } : {}),
    },
  ];
}

/**
 * A client certificate the node's CA signed for `commonName`, made unless it is there: with it a
 * client logs in (EXTERNAL) as the user of that name, which the caller makes.
 * @param {string} commonName
 */
export async function clientCertificate(commonName) {
  const dir = paths().tlsDir;
  await ensureTestCertificates(dir, "ruststream test CA");
  return ensureClientCertificate(dir, commonName);
}

const amqpUrl = () => amqpUrlAt(ports().amqp.port);
const amqpsUrl = () => `amqps://${USER}:${secrets().password}@${HOST}:${ports().tls.port}`;
const amqpUrlShown = () => `amqp://${HOST}:${ports().amqp.port}`;

export function env() {
  return {
    RABBITMQ_URL: amqpUrl(),
    RABBITMQ_TLS_URL: amqpsUrl(),
    RABBITMQ_TLS_CA: tlsFiles().ca,
    RABBITMQ_MANAGEMENT_URL: `http://${HOST}:${ports().management.port}`,
    RABBITMQ_USERNAME: USER,
    RABBITMQ_PASSWORD: secrets().password,
  };
}
