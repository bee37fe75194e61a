// @ts-check
// PostgreSQL from Debian's postgresql-15, as a cluster of our own: never the system cluster the
// package may have created. `initdb` and the server refuse to run as root, so a root `up` runs them
// as the `postgres` user (any other user runs them as itself). The cluster listens on 127.0.0.1 only
// (no Unix socket), with password authentication (SCRAM) for the role and database `ruststream`.
// Two clusters, each with its own state folder and port: the one every live test shares
// (stateDir("postgres"), POSTGRES_PORT) and a restartable one for the tests that crash a server
// (stateDir("postgres-restartable"), POSTGRES_RESTART_PORT), so that no test ever stops the shared
// one. A state folder holds secrets.json (the passwords), server.log, postgres.pid, settings.json
// (what the running server was started with) and cluster/ (the data folder), unless the server's
// user cannot reach the state folder (a root home is private): then cluster/ lives in that user's
// home, under ruststream-brokers/<a digest of the state folder's path>.
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { holdServiceStarts } from "../../setup/noServiceStarts.mjs";
import {
  isAlive,
  portOpen,
  rssMiB,
  run,
  runningPid,
  startDetached,
  tail,
  waitFor,
  withLock,
} from "./process.mjs";
import { envPort, stateDir } from "./state.mjs";

export const name = "postgres";

const HOST = "127.0.0.1";
/** The role and database the tests use (not a superuser: it owns its database and may create more). */
export const USER = "ruststream";
const DATABASE = "ruststream";
const SUPERUSER = "postgres";
const START_BUDGET_MS = 60_000;

/**
 * The newest PostgreSQL server Debian installed (/usr/lib/postgresql/<major>/bin), or
 * $POSTGRES_BIN (a folder holding initdb, pg_ctl and postgres).
 * @returns {string | undefined}
 */
function binDir() {
  const explicit = process.env.POSTGRES_BIN;
  if (explicit) return explicit;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] === undefined ? undefined : join(root, majors[0], "bin");
}

/** Installs Debian's postgresql-15 when missing (as root), else says which command to run. */
async function ensureInstalled(/** @type {(line: string) => void} */ log) {
  if (binDir() !== undefined) return;
  if (process.getuid?.() !== 0) {
    throw new Error(
      "postgres: no server found under /usr/lib/postgresql: run `sudo apt-get install -y postgresql-15` (Debian's) and retry, or set POSTGRES_BIN to a folder holding initdb, pg_ctl and postgres",
    );
  }
  log("installing Debian's postgresql-15 (apt-get)");
  // Its postinst would start the system cluster, which the tests never use.
  const release = holdServiceStarts();
  try {
    await run("apt-get", ["update", "-qq"]);
    await run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "postgresql-15"], {
      env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
    });
  } finally {
    release();
  }
}

/**
 * Who runs initdb and the server: the `postgres` user for root (both refuse root), else ourselves.
 * @returns {{ uid: number, gid: number, home: string, name: string } | undefined} undefined: ourselves
 */
function serverUser() {
  if (process.getuid?.() !== 0) return undefined;
  const entry = spawnSync("getent", ["passwd", SUPERUSER], { encoding: "utf8" }).stdout?.trim();
  const fields = entry?.split(":");
  if (!fields || fields.length < 6) {
    throw new Error(
      "postgres: running as root, and there is no `postgres` user to run the server as (initdb refuses root): install Debian's postgresql-15, which creates it, or run `up` as an ordinary user",
    );
  }
  return {
    name: SUPERUSER,
    uid: Number(fields[2]),
    gid: Number(fields[3]),
    home: /** @type {string} */ (fields[5]),
  };
}

/**
 * The spawn options that run a command as the server's user.
 * @param {ReturnType<typeof serverUser>} user
 */
const as = (user) => (user === undefined ? {} : { uid: user.uid, gid: user.gid });

/**
 * Whether a live process (not a zombie: a killed postmaster whose parent is gone may wait long to
 * be reaped) is still in the process group `pid` leads.
 */
function groupAlive(/** @type {number} */ pid) {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // After the command's closing parenthesis: state, parent pid, process group.
    const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(group) === pid && state !== "Z") return true;
  }
  return false;
}

/**
 * One cluster of ours: its state folder (under the state root) and its port, and what runs it.
 * @param {{ folder: string, variable: string, fallback: number }} where its port's variable and default
 */
function cluster(where) {
  const port = () => envPort(where.variable, where.fallback);

  function paths() {
    const dir = stateDir(where.folder);
    return {
      dir,
      secrets: join(dir, "secrets.json"),
      log: join(dir, "server.log"),
      pidFile: join(dir, "postgres.pid"),
      settings: join(dir, "settings.json"),
      lock: join(dir, "up.lock"),
    };
  }

  /** The passwords, made once per machine (mode 600); they only ever guard a loopback port. */
  function secrets() {
    const file = paths().secrets;
    if (!existsSync(file)) {
      const make = () => randomBytes(12).toString("hex");
      writeFileSync(file, JSON.stringify({ password: make(), superPassword: make() }), {
        mode: 0o600,
      });
    }
    return /** @type {{ password: string, superPassword: string }} */ (
      JSON.parse(readFileSync(file, "utf8"))
    );
  }

  /**
   * The data folder. In the state folder when the server's user can reach it; else (root's home is
   * private to root) in that user's home, named by a digest of its state folder's path so two state
   * folders (two state roots, or the shared and the restartable cluster) never share a data folder.
   * @param {ReturnType<typeof serverUser>} user
   */
  function clusterDir(user) {
    const inState = join(paths().dir, "cluster");
    if (user === undefined) return inState;
    const reachable =
      spawnSync("test", ["-x", paths().dir], { ...as(user), stdio: "ignore" }).status === 0;
    const parent = reachable
      ? paths().dir
      : join(
          user.home,
          "ruststream-brokers",
          createHash("sha256").update(paths().dir).digest("hex").slice(0, 12),
        );
    // Every folder from the server user's home down is theirs (the state folder's stay ours).
    const made = reachable ? [] : [join(parent, ".."), parent];
    const dir = join(parent, "cluster");
    for (const folder of [...made, dir]) {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      chownSync(folder, user.uid, user.gid);
    }
    return dir;
  }

  /**
   * The server's settings, on its command line (the data folder's postgresql.conf stays initdb's):
   * loopback only, no Unix socket (the system cluster's socket folder is not ours to share).
   */
  function settings() {
    return {
      listen_addresses: HOST,
      port: String(port()),
      unix_socket_directories: "",
      max_connections: "200",
      // Tests open and drop many connections; their lines would drown what matters in the log.
      log_connections: "off",
      log_min_messages: "warning",
    };
  }

  /**
   * A client on our cluster, or undefined when none answers.
   * @param {{ user: string, password: string, database: string }} login
   */
  async function connect(login) {
    const client = new pg.Client({
      host: HOST,
      port: port(),
      ...login,
      connectionTimeoutMillis: 2000,
    });
    client.on("error", () => {});
    try {
      await client.connect();
      return client;
    } catch {
      await client.end().catch(() => {});
      return undefined;
    }
  }

  /**
   * Whether the server on our port is ours: our role logs in with its password, a real query answers,
   * and the server names our data folder.
   * @param {string} data
   */
  async function serves(data) {
    const client = await connect({ user: USER, password: secrets().password, database: DATABASE });
    if (client === undefined) return false;
    try {
      const result = await client.query("SELECT current_setting('data_directory') AS dir");
      return result.rows[0]?.dir === data;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  }

  /**
   * initdb on an empty data folder: UTF-8, the C locale, SCRAM for TCP logins, the superuser's
   * password from a file only the server's user reads (removed after).
   * @param {string} bin @param {string} data @param {ReturnType<typeof serverUser>} user
   */
  async function initCluster(bin, data, user) {
    const pwfile = join(data, "..", "initdb.pw");
    writeFileSync(pwfile, `${secrets().superPassword}\n`, { mode: 0o600 });
    if (user !== undefined) chownSync(pwfile, user.uid, user.gid);
    try {
      await run(
        join(bin, "initdb"),
        [
          "-D",
          data,
          "-U",
          SUPERUSER,
          `--pwfile=${pwfile}`,
          "--auth-host=scram-sha-256",
          "--auth-local=scram-sha-256",
          "--encoding=UTF8",
          "--locale=C",
          "--no-sync",
        ],
        { ...as(user) },
      );
    } finally {
      rmSync(pwfile, { force: true });
    }
  }

  /** Our role and database, made once and their password kept as secrets.json says. */
  async function ensureRole() {
    const s = secrets();
    const admin = await connect({
      user: SUPERUSER,
      password: s.superPassword,
      database: "postgres",
    });
    if (admin === undefined)
      throw new Error("postgres: the superuser cannot log in to our cluster");
    try {
      const exists = await admin.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [USER]);
      const verb = exists.rowCount === 0 ? "CREATE" : "ALTER";
      // A password cannot be a bound parameter in CREATE/ALTER ROLE; it is our own hex string.
      await admin.query(`${verb} ROLE ${USER} LOGIN CREATEDB PASSWORD '${s.password}'`);
      // current_setting('data_directory'), which `up` reads to know the server is ours.
      await admin.query(`GRANT pg_read_all_settings TO ${USER}`);
      const db = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [DATABASE]);
      if (db.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE} OWNER ${USER}`);
    } finally {
      await admin.end().catch(() => {});
    }
  }

  /**
   * Starts the server on its data folder, detached, and waits until our role's query answers.
   * @param {string} bin @param {string} data @param {ReturnType<typeof serverUser>} user
   */
  async function launch(bin, data, user) {
    const p = paths();
    const wanted = settings();
    const args = ["-D", data, ...Object.entries(wanted).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
    writeFileSync(p.log, "");
    const pid = startDetached({
      command: join(bin, "postgres"),
      args,
      logFile: p.log,
      pidFile: p.pidFile,
      cwd: data,
      ...as(user),
    });
    writeFileSync(p.settings, JSON.stringify({ data, ...wanted }));
    const admin = { user: SUPERUSER, password: secrets().superPassword, database: "postgres" };
    try {
      await waitFor(
        async () => {
          const client = await connect(admin);
          await client?.end();
          return client !== undefined;
        },
        { timeoutMs: START_BUDGET_MS, pid, what: `postgres on ${HOST}:${port()}` },
      );
      await ensureRole();
      await waitFor(() => serves(data), {
        timeoutMs: 10_000,
        pid,
        what: `postgres: role ${USER} on ${HOST}:${port()}`,
      });
    } catch (error) {
      if (isAlive(pid)) await stop(bin, data, user);
      throw new Error(`${/** @type {Error} */ (error).message}\n--- ${p.log} ---\n${tail(p.log)}`);
    }
  }

  /**
   * A fast shutdown through pg_ctl (sessions are ended, then a checkpoint), as the server's user.
   * @param {string} bin @param {string} data @param {ReturnType<typeof serverUser>} user
   */
  async function stop(bin, data, user) {
    const pid = runningPid(paths().pidFile);
    if (pid === undefined) return false;
    await run(join(bin, "pg_ctl"), ["stop", "-D", data, "-m", "fast", "-w", "-t", "60"], {
      ...as(user),
    }).catch(() => {
      // pg_ctl could not stop it (its postmaster.pid gone, say): the process itself then.
      if (isAlive(pid)) process.kill(pid, "SIGKILL");
    });
    await waitFor(async () => !isAlive(pid), {
      timeoutMs: 30_000,
      intervalMs: 50,
      what: `postgres (pid ${pid}) stopping`,
    });
    rmSync(paths().pidFile, { force: true });
    return true;
  }

  function setup() {
    const bin = binDir();
    if (bin === undefined) throw new Error("postgres: not installed (see ensureInstalled)");
    const user = serverUser();
    return { bin, user, data: clusterDir(user) };
  }

  /** Whether the running server was started with the settings `up` would give it now. */
  function sameSettings(/** @type {string} */ data) {
    const file = paths().settings;
    if (!existsSync(file)) return false;
    return readFileSync(file, "utf8") === JSON.stringify({ data, ...settings() });
  }

  /**
   * Starts our cluster unless it runs; the caller holds `up`'s lock.
   * @param {(line: string) => void} log
   * @returns {Promise<boolean>} whether it was already running
   */
  async function upLocked(log) {
    const { bin, user, data } = setup();
    const pid = runningPid(paths().pidFile);
    if (pid !== undefined && sameSettings(data) && (await serves(data))) return true;
    if (pid !== undefined) {
      log("[brokers] postgres: restarting ours, which does not answer as `up` would start it");
      await stop(bin, data, user);
    }
    if (await portOpen(port())) {
      throw new Error(
        `postgres: port ${port()} is held by a process these tools did not start; stop it or set ${where.variable} to a free port`,
      );
    }
    if (!existsSync(join(data, "PG_VERSION"))) await initCluster(bin, data, user);
    await launch(bin, data, user);
    return false;
  }

  /** @param {(line: string) => void} log */
  async function up(log) {
    const begin = Date.now();
    await ensureInstalled(log);
    const already = await withLock(
      paths().lock,
      { what: "postgres", timeoutMs: START_BUDGET_MS + 30_000 },
      () => upLocked(log),
    );
    return { already, address: `${HOST}:${port()}`, ms: Date.now() - begin };
  }

  /** @param {(line: string) => void} _log */
  async function down(_log) {
    if (runningPid(paths().pidFile) === undefined) return false;
    const { bin, user, data } = setup();
    return stop(bin, data, user);
  }

  /**
   * Stops the server (SIGKILL of the postmaster with `hard`, as a crash would: the next start
   * recovers from the WAL) and starts it again on the same data, under `up`'s lock. `whileDown`
   * runs once its port is released; it starts again whatever `whileDown` does (a throw is rethrown
   * after the start).
   * @param {{ hard?: boolean, whileDown?: () => Promise<void> }} [options]
   */
  async function restart(options = {}) {
    await withLock(
      paths().lock,
      { what: "postgres", timeoutMs: START_BUDGET_MS + 30_000 },
      async () => {
        const { bin, user, data } = setup();
        const pid = runningPid(paths().pidFile);
        if (options.hard && pid !== undefined) {
          // The postmaster and every backend at once (the detached start made it a process group),
          // as a crash of the server would: a backend left behind would hold the shared memory and
          // refuse the next start.
          process.kill(-pid, "SIGKILL");
          await waitFor(async () => !groupAlive(pid), {
            timeoutMs: 10_000,
            intervalMs: 20,
            what: "postgres's processes dying",
          });
          rmSync(paths().pidFile, { force: true });
          // A dead postmaster not yet reaped keeps its pid, and the next start would take its lock
          // file for a live server's; nothing of the group holds the data folder any more.
          rmSync(join(data, "postmaster.pid"), { force: true });
        } else {
          await stop(bin, data, user);
        }
        await waitFor(async () => !(await portOpen(port())), {
          timeoutMs: 10_000,
          intervalMs: 20,
          what: `postgres releasing port ${port()}`,
        });
        /** @type {{ error: unknown } | undefined} */
        let failed;
        await options.whileDown?.().catch((error) => {
          failed = { error };
        });
        await launch(bin, data, user);
        if (failed !== undefined) throw failed.error;
      },
    );
  }

  /**
   * Runs `fn` holding the server alone: a test that restarts it holds it for its whole body, so two
   * such tests never restart it under each other.
   * @template T
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  function exclusive(fn) {
    return withLock(
      join(paths().dir, "exclusive.lock"),
      { what: "postgres, held by a test that restarts it", timeoutMs: 10 * 60_000 },
      fn,
    );
  }

  async function status() {
    const pid = runningPid(paths().pidFile);
    /** @type {{ running: boolean, address: string, pid?: number, rssMiB?: number }} */
    const s = { running: pid !== undefined, address: `${HOST}:${port()}` };
    if (pid !== undefined) {
      s.pid = pid;
      const mem = rssMiB(pid);
      if (mem !== undefined) s.rssMiB = mem;
    }
    return [s];
  }

  function env() {
    const s = secrets();
    return {
      POSTGRES_URL: `postgres://${USER}:${s.password}@${HOST}:${port()}/${DATABASE}`,
    };
  }

  return { up, down, restart, exclusive, status, env };
}

/** The cluster every project's live tests share: started by `up`, never stopped by a test. */
export const { up, down, status, env } = cluster({
  folder: "postgres",
  variable: "POSTGRES_PORT",
  fallback: 15432,
});

const restartableCluster = cluster({
  folder: "postgres-restartable",
  variable: "POSTGRES_RESTART_PORT",
  fallback: 15433,
});

/**
 * A second cluster, for the tests that restart one (a crash and the recovery from the WAL): its own
 * data and port (POSTGRES_RESTART_PORT, 15433), started and stopped by those tests inside
 * `exclusive`, so the cluster the other tests share is never stopped under them.
 */
export const restartable = {
  /** Starts it (idempotently); resolves with its URL, our role's password in it. */
  async up(/** @type {(line: string) => void} */ log = () => {}) {
    await restartableCluster.up(log);
    return restartableCluster.env().POSTGRES_URL;
  },
  /** Stops it (a clean stop) when it runs: the test that started it, once done. */
  down: () => restartableCluster.down(() => {}),
  restart: restartableCluster.restart,
  exclusive: restartableCluster.exclusive,
};
