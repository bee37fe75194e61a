// @ts-check
// NATS 2.15.3, built once from the Go module proxy with the machine's Go (Debian's 2.9 lacks what
// the package uses: multi-filter consumers, 2.12 atomic batches) into a cache folder outside the
// clone, then run as seven small servers on loopback, one per kind of test the NATS package needs:
// plain (JetStream on file storage, the monitoring port), auth (a user with a password and an NKey
// user), token, TLS (testCa.mjs), JWT (operator mode, a user's credentials file), ws (a
// websocket listener beside its client port, JetStream, the auth instance's users) and wss (a TLS
// websocket listener with the TLS instance's certificate). State lives
// in stateDir("nats", <instance>); the secrets (password, token, seeds, JWTs) are made once and
// kept in stateDir("nats")/secrets.json (mode 600): they only ever guard a loopback port.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import {
  createAccount,
  createOperator,
  createUser,
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
  fromSeed,
} from "@nats-io/jwt";
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
import { ensureTestCertificates, testCertificates } from "./testCa.mjs";

export const name = "nats";

const HOST = "127.0.0.1";
/** The user the auth instance knows by password (the NKey user has no name, only its key). */
export const USER = "ruststream";

/**
 * @typedef {"plain" | "auth" | "token" | "tls" | "jwt" | "ws" | "wss"} InstanceName
 * @typedef {{ name: InstanceName, port: number, portVar: string }} Instance
 */

/** @returns {Instance[]} */
function instances() {
  return [
    { name: "plain", port: envPort("NATS_PORT", 14222), portVar: "NATS_PORT" },
    { name: "auth", port: envPort("NATS_AUTH_PORT", 14223), portVar: "NATS_AUTH_PORT" },
    { name: "token", port: envPort("NATS_TOKEN_PORT", 14224), portVar: "NATS_TOKEN_PORT" },
    { name: "tls", port: envPort("NATS_TLS_PORT", 14225), portVar: "NATS_TLS_PORT" },
    { name: "jwt", port: envPort("NATS_JWT_PORT", 14226), portVar: "NATS_JWT_PORT" },
    { name: "ws", port: envPort("NATS_WS_CLIENT_PORT", 14227), portVar: "NATS_WS_CLIENT_PORT" },
    { name: "wss", port: envPort("NATS_WSS_CLIENT_PORT", 14229), portVar: "NATS_WSS_CLIENT_PORT" },
  ];
}

/**
 * The ws instance's websocket port. An instance of its own rather than a listener on the plain
 * one: the plain server's configuration stays what every clone's tooling writes, so a clone
 * without this instance never restarts it to take the listener away.
 */
const wsPort = () => envPort("NATS_WS_PORT", 14228);

/**
 * The wss instance's websocket port, over TLS. An instance of its own too, for the same reason:
 * the ws server's configuration stays what a clone without it writes.
 */
const wssPort = () => envPort("NATS_WSS_PORT", 14230);

/**
 * The websocket port of the instances that have one, with the variable that moves it.
 * @param {InstanceName} instance
 * @returns {[number, string] | undefined}
 */
function websocketPortOf(instance) {
  if (instance === "ws") return [wsPort(), "NATS_WS_PORT"];
  if (instance === "wss") return [wssPort(), "NATS_WSS_PORT"];
  return undefined;
}

/** The plain instance's monitoring port (`/varz`, `/jsz`, `/healthz`). */
const monitorPort = () => envPort("NATS_MONITOR_PORT", 18222);

/** @param {InstanceName} instance */
const dirOf = (instance) => stateDir("nats", instance);
/** @param {InstanceName} instance */
const filesOf = (instance) => ({
  config: join(dirOf(instance), "nats.conf"),
  pidFile: join(dirOf(instance), "nats.pid"),
  log: join(dirOf(instance), "nats.log"),
  // The server name the running process was started with (random per start): the INFO a server
  // sends on connect names it, which proves the process on the port is the one `up` started.
  started: join(dirOf(instance), "started.json"),
});

// ---------------------------------------------------------------------------------------------
// Secrets: made once, kept in the state folder.

/**
 * @typedef {{
 *   password: string,
 *   token: string,
 *   nkeySeed: string,
 *   nkeyPublic: string,
 *   operatorJwt: string,
 *   accountPublic: string,
 *   accountJwt: string,
 *   accountSeed: string,
 *   userJwt: string,
 *   userSeed: string,
 * }} Secrets
 */

const secretsFile = () => join(stateDir("nats"), "secrets.json");

/**
 * The passwords, keys and JWTs every instance is configured with, made once per machine so every
 * clone and test run agrees on them (a JWT carries its issue time, so making them again would
 * change the configuration and restart the server on every `up`).
 * @returns {Promise<Secrets>}
 */
async function ensureSecrets() {
  const file = secretsFile();
  if (existsSync(file)) return readSecrets();
  const text = (/** @type {Uint8Array} */ bytes) => new TextDecoder().decode(bytes);
  const nkey = createUser();
  const operator = createOperator();
  const account = createAccount();
  const user = createUser();
  const operatorJwt = await encodeOperator("ruststream-test", operator);
  // The library's defaults are limits of 0 (no connection, no subscription): lift them all.
  const unlimited = { subs: -1, data: -1, payload: -1 };
  const accountJwt = await encodeAccount(
    "ruststream",
    account,
    { limits: { ...unlimited, conn: -1, leaf: -1, imports: -1, exports: -1, wildcards: true } },
    { signer: operator },
  );
  const userJwt = await encodeUser("ruststream", user, account, unlimited);
  /** @type {Secrets} */
  const secrets = {
    password: randomBytes(12).toString("hex"),
    token: randomBytes(16).toString("hex"),
    nkeySeed: text(nkey.getSeed()),
    nkeyPublic: nkey.getPublicKey(),
    operatorJwt,
    accountPublic: account.getPublicKey(),
    accountJwt,
    accountSeed: text(account.getSeed()),
    userJwt,
    userSeed: text(user.getSeed()),
  };
  writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
  return secrets;
}

/** @returns {Secrets} */
function readSecrets() {
  return JSON.parse(readFileSync(secretsFile(), "utf8"));
}

/** The JWT user's credentials file (JWT and seed), what a client is given in operator mode. */
function credsFile() {
  const file = join(dirOf("jwt"), "user.creds");
  if (!existsSync(file)) {
    const s = readSecrets();
    writeFileSync(file, fmtCreds(s.userJwt, fromSeed(new TextEncoder().encode(s.userSeed))), {
      mode: 0o600,
    });
  }
  return file;
}

const tlsFiles = () => testCertificates(stateDir("nats", "tls-certs"));

// ---------------------------------------------------------------------------------------------
// Configuration and the instances.

/** A value in NATS's configuration syntax (a quoted string: JSON's quoting is NATS's). */
const q = (/** @type {string} */ value) => JSON.stringify(value);

/**
 * The configuration of one instance, without its server name (which changes per start).
 * @param {Instance} instance
 * @param {Secrets} s
 */
function configBody(instance, s) {
  const lines = [
    `# Written by tooling/brokers/src/nats.mjs on every start; edit that file, not this one.`,
    `listen: ${q(`${HOST}:${instance.port}`)}`,
    "max_payload: 1048576",
  ];
  switch (instance.name) {
    case "plain":
      lines.push(
        `http: ${q(`${HOST}:${monitorPort()}`)}`,
        // File storage: what a test publishes survives a restart of the server (a SIGKILL too).
        `jetstream { store_dir: ${q(join(dirOf("plain"), "data"))}, max_memory_store: 268435456, max_file_store: 4294967296 }`,
      );
      break;
    case "auth":
      lines.push(
        "authorization {",
        `  users: [ { user: ${q(USER)}, password: ${q(s.password)} }, { nkey: ${q(s.nkeyPublic)} } ]`,
        "}",
      );
      break;
    case "token":
      lines.push(`authorization { token: ${q(s.token)} }`);
      break;
    case "tls": {
      const f = tlsFiles();
      // Clients prove nothing about themselves; they must verify the server against the CA.
      lines.push(`tls { cert_file: ${q(f.cert)}, key_file: ${q(f.key)}, timeout: 2 }`);
      break;
    }
    case "jwt":
      lines.push(
        `operator: ${q(s.operatorJwt)}`,
        "resolver: MEMORY",
        `resolver_preload: { ${s.accountPublic}: ${q(s.accountJwt)} }`,
      );
      break;
    case "ws":
      lines.push(
        `websocket { host: ${q(HOST)}, port: ${wsPort()}, no_tls: true }`,
        `jetstream { store_dir: ${q(join(dirOf("ws"), "data"))}, max_memory_store: 67108864, max_file_store: 1073741824 }`,
        // The auth instance's users, checked on the websocket too; a client giving none is
        // the password user, so one server serves the plain tests and the credentials' ones.
        "authorization {",
        `  users: [ { user: ${q(USER)}, password: ${q(s.password)} }, { nkey: ${q(s.nkeyPublic)} } ]`,
        "}",
        `no_auth_user: ${q(USER)}`,
      );
      break;
    case "wss": {
      const f = tlsFiles();
      // Core NATS only, no users: what it tests is the TLS handshake of Node's WebSocket (the
      // test CA's server certificate), everything past it being the ws instance's.
      lines.push(
        `websocket { host: ${q(HOST)}, port: ${wssPort()}, tls { cert_file: ${q(f.cert)}, key_file: ${q(f.key)} } }`,
      );
      break;
    }
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The INFO line a NATS server sends first on every connection (before TLS and authentication).
 * @param {number} port
 * @returns {Promise<Record<string, unknown> | undefined>}
 */
export function serverInfo(port) {
  return new Promise((resolve) => {
    const socket = connect({ host: HOST, port });
    let buffered = "";
    const done = (/** @type {Record<string, unknown> | undefined} */ info) => {
      socket.destroy();
      resolve(info);
    };
    socket.setTimeout(2000, () => done(undefined));
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      const end = buffered.indexOf("\r\n");
      if (end < 0) {
        if (buffered.length > 65_536) done(undefined);
        return;
      }
      const line = buffered.slice(0, end);
      if (!line.startsWith("INFO ")) return done(undefined);
      try {
        done(JSON.parse(line.slice(5)));
      } catch {
        done(undefined);
      }
    });
    socket.once("error", () => done(undefined));
    socket.once("close", () => done(undefined));
  });
}

/**
 * Whether the server on the instance's port is the one `up` started (its server name) and serves:
 * the plain instance also once JetStream is ready (`/healthz`).
 * @param {Instance} instance
 * @param {string} serverName
 */
async function serving(instance, serverName) {
  const info = await serverInfo(instance.port);
  if (info?.server_name !== serverName) return false;
  if (instance.name === "ws") return info.jetstream === true && (await portOpen(wsPort()));
  if (instance.name === "wss") return portOpen(wssPort());
  if (instance.name !== "plain") return true;
  if (info.jetstream !== true) return false;
  const response = await fetch(`http://${HOST}:${monitorPort()}/healthz`).catch(() => undefined);
  return response?.ok === true;
}

/**
 * Every port an instance listens on, with the variable that moves it.
 * @param {Instance} instance
 * @returns {[number, string][]}
 */
function portsOf(instance) {
  /** @type {[number, string][]} */
  const ports = [[instance.port, instance.portVar]];
  if (instance.name === "plain") ports.push([monitorPort(), "NATS_MONITOR_PORT"]);
  const websocket = websocketPortOf(instance.name);
  if (websocket !== undefined) ports.push(websocket);
  return ports;
}

/** @param {InstanceName} instance */
function startedWith(instance) {
  const file = filesOf(instance).started;
  if (!existsSync(file)) return undefined;
  return /** @type {{ serverName: string, body: string }} */ (
    JSON.parse(readFileSync(file, "utf8"))
  );
}

/**
 * Starts one instance unless it already runs on the current configuration; one running on an
 * older configuration (the tool changed since) is stopped and started again on its data.
 * @param {Instance} instance
 * @param {string} binary
 * @param {Secrets} s
 * @param {(line: string) => void} log
 * @returns {Promise<boolean>} whether it was already running
 */
async function upInstance(instance, binary, s, log) {
  const files = filesOf(instance.name);
  const body = configBody(instance, s);
  const pid = runningPid(files.pidFile);
  const was = startedWith(instance.name);
  if (pid !== undefined && was !== undefined && (await serving(instance, was.serverName))) {
    if (was.body === body) return true;
    log(`[brokers] nats ${instance.name}: configuration changed, restarting on its data`);
    await stopByPidFile(files.pidFile);
  } else if (pid !== undefined) {
    await stopByPidFile(files.pidFile);
  }
  for (const [port, variable] of portsOf(instance)) {
    if (await portOpen(port)) {
      throw new Error(
        `nats ${instance.name}: port ${port} is held by a process these tools did not start; stop it or set ${variable} to a free port`,
      );
    }
  }
  if (instance.name === "tls" || instance.name === "wss")
    await ensureTestCertificates(stateDir("nats", "tls-certs"), "ruststream test CA");
  const serverName = `ruststream-${instance.name}-${randomBytes(4).toString("hex")}`;
  writeFileSync(files.config, `server_name: ${q(serverName)}\n${body}`, { mode: 0o600 });
  writeFileSync(files.started, JSON.stringify({ serverName, body }), { mode: 0o600 });
  writeFileSync(files.log, "");
  const started = startDetached({
    command: binary,
    args: ["-c", files.config],
    logFile: files.log,
    pidFile: files.pidFile,
    cwd: dirOf(instance.name),
  });
  try {
    await waitFor(() => serving(instance, serverName), {
      timeoutMs: 30_000,
      pid: started,
      what: `nats ${instance.name} on ${HOST}:${instance.port}`,
    });
  } catch (error) {
    if (isAlive(started)) await stopByPidFile(files.pidFile);
    throw new Error(
      `${/** @type {Error} */ (error).message}\n--- ${files.log} ---\n${tail(files.log)}`,
    );
  }
  log(`[brokers] nats ${instance.name} on ${HOST}:${instance.port}`);
  return false;
}

const upLock = () => join(stateDir("nats"), "up.lock");

/** @param {(line: string) => void} log */
export async function up(log) {
  const begin = Date.now();
  const binary = await ensureServer(log);
  let already = true;
  // Vitest projects run their global setups together: one `up` starts, the others wait and see.
  await withLock(upLock(), { what: "nats", timeoutMs: 60_000 }, async () => {
    const s = await ensureSecrets();
    for (const instance of instances()) {
      if (!(await upInstance(instance, binary, s, log))) already = false;
    }
  });
  return {
    already,
    address: instances()
      .map((i) => `${HOST}:${i.port}`)
      .join(", "),
    ms: Date.now() - begin,
  };
}

/** @param {(line: string) => void} _log */
export async function down(_log) {
  let stopped = false;
  for (const instance of instances()) {
    if (await stopByPidFile(filesOf(instance.name).pidFile)) stopped = true;
  }
  return stopped;
}

/**
 * Restarts the plain instance (JetStream on file storage) on its data, for restart tests: with
 * `hard`, a SIGKILL as a crash would; `whileDown` runs once its ports are released, and the server
 * starts again whatever it does (a throw is rethrown after the start). Under `up`'s lock, so a
 * global setup never finds the port free and starts a second server meanwhile.
 * @param {{ hard?: boolean, whileDown?: () => Promise<void> }} [options]
 */
export async function restart(options = {}) {
  const instance = /** @type {Instance} */ (instances().find((i) => i.name === "plain"));
  const files = filesOf("plain");
  const binary = await ensureServer(() => {});
  await withLock(upLock(), { what: "nats", timeoutMs: 60_000 }, async () => {
    if (options.hard) {
      const pid = runningPid(files.pidFile);
      if (pid !== undefined) process.kill(pid, "SIGKILL");
    }
    await stopByPidFile(files.pidFile);
    await waitFor(
      async () => !(await portOpen(instance.port)) && !(await portOpen(monitorPort())),
      {
        timeoutMs: 10_000,
        intervalMs: 20,
        what: `nats plain releasing ports ${instance.port} and ${monitorPort()}`,
      },
    );
    /** @type {unknown} */
    let failure;
    try {
      await options.whileDown?.();
    } catch (error) {
      failure = error;
    }
    await upInstance(instance, binary, readSecrets(), () => {});
    if (failure !== undefined) throw failure;
  });
}

/**
 * Runs `fn` holding the plain instance alone: a test that restarts it holds it for its whole body,
 * so two such tests never restart it under each other.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
export function exclusive(fn) {
  return withLock(
    join(stateDir("nats"), "plain.exclusive.lock"),
    { what: "nats plain, held by a test that restarts it", timeoutMs: 10 * 60_000 },
    fn,
  );
}

export async function status() {
  const result = [];
  for (const instance of instances()) {
    const pid = runningPid(filesOf(instance.name).pidFile);
    const was = startedWith(instance.name);
    const running =
      pid !== undefined && was !== undefined && (await serving(instance, was.serverName));
    result.push({
      running,
      address: `${instance.name} ${HOST}:${instance.port}`,
      ...(running && pid !== undefined ? { pid, rssMiB: rssMiB(pid) } : {}),
    });
  }
  return result;
}

export function env() {
  const port = (/** @type {InstanceName} */ n) =>
    /** @type {Instance} */ (instances().find((i) => i.name === n)).port;
  const s = existsSync(secretsFile()) ? readSecrets() : undefined;
  /** @type {Record<string, string>} */
  const vars = {
    NATS_URL: `nats://${HOST}:${port("plain")}`,
    NATS_MONITOR_URL: `http://${HOST}:${monitorPort()}`,
    NATS_AUTH_URL: `nats://${HOST}:${port("auth")}`,
    NATS_TOKEN_URL: `nats://${HOST}:${port("token")}`,
    NATS_TLS_URL: `tls://${HOST}:${port("tls")}`,
    NATS_TLS_CA: tlsFiles().ca,
    NATS_JWT_URL: `nats://${HOST}:${port("jwt")}`,
    NATS_WS_URL: `ws://${HOST}:${wsPort()}`,
    // Its certificate is the TLS instance's: NATS_TLS_CA signed it.
    NATS_WSS_URL: `wss://${HOST}:${wssPort()}`,
  };
  // The secrets exist once `up` ran; before, only the addresses are known.
  if (s !== undefined) {
    Object.assign(vars, {
      NATS_USER: USER,
      NATS_PASSWORD: s.password,
      NATS_NKEY_SEED: s.nkeySeed,
      NATS_TOKEN: s.token,
      NATS_CREDS: credsFile(),
      // The account's seed signs users of its own (a test's user JWT carrying what it checks).
      NATS_JWT_ACCOUNT_SEED: s.accountSeed,
    });
  }
  return vars;
}
