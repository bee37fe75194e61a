// @ts-check
// What the test command needs from the machine beyond Node: the brokers' servers and JVM, the C
// toolchain and libraries that build librdkafka from source (its prebuilt binary comes from GitHub,
// which a machine that reaches only package registries cannot fetch), and Rust for the interop
// tests. As root with apt-get, whatever is missing is installed; otherwise the command stops before
// any test runs and names each missing piece with the command that installs it.
import { spawnSync } from "node:child_process";
import { accessSync, appendFileSync, constants } from "node:fs";
import { hostname } from "node:os";
import { delimiter, join } from "node:path";
import { holdServiceStarts } from "./noServiceStarts.mjs";
import { answers, fail, say, step } from "./step.mjs";

/**
 * @typedef {{ what: string, why: string, present: () => boolean, apt?: string, fix?: string }} Piece
 */

/** Whether an executable named `name` is on PATH (looked up here: a machine may lack even `sh`). */
const command = (/** @type {string} */ name) => () =>
  (process.env.PATH ?? "").split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });

/** Whether the file at `path` (off PATH: a package's own folder) is executable. */
const executable = (/** @type {string} */ path) => () => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

const hasDpkg = command("dpkg-query")();

/** A C library, checked by its Debian package where there is dpkg, else through pkg-config. */
const library = (/** @type {string} */ deb, /** @type {string} */ pc) => () =>
  hasDpkg
    ? /install ok installed/.test(
        spawnSync("dpkg-query", ["-W", `-f=$\{Status}`, deb], { encoding: "utf8" }).stdout ?? "",
      )
    : answers("pkg-config", ["--exists", pc]);

const librdkafka = "to build librdkafka (@confluentinc/kafka-javascript) from source";

/** @returns {Piece[]} */
function pieces(/** @type {{ interop: boolean }} */ options) {
  /** @type {Piece[]} */
  const all = [
    {
      what: "redis-server",
      why: "the Redis test instances",
      present: command("redis-server"),
      apt: "redis-server",
    },
    {
      what: "postgresql-15",
      why: "the PostgreSQL test cluster (tooling/brokers runs its own, never the system one)",
      present: executable("/usr/lib/postgresql/15/bin/initdb"),
      apt: "postgresql-15",
    },
    {
      what: "rabbitmq-server",
      why: "the RabbitMQ test node (Debian's 3.10 scripts, started by tooling/brokers; the package's own service is not used)",
      present: executable("/usr/lib/rabbitmq/bin/rabbitmq-server"),
      apt: "rabbitmq-server",
    },
    {
      what: "openssl",
      why: "the test brokers' TLS certificates",
      present: command("openssl"),
      apt: "openssl",
    },
    {
      what: "java (17 or newer)",
      why: "Kafka and Pulsar run from their jars",
      present: command("java"),
      apt: "openjdk-17-jre-headless",
    },
    {
      what: "mvn",
      why: "fetches Kafka's and Pulsar's jars from Maven Central",
      present: command("mvn"),
      apt: "maven",
    },
    { what: "make", why: librdkafka, present: command("make"), apt: "make" },
    { what: "g++", why: librdkafka, present: command("g++"), apt: "g++" },
    {
      what: "python3",
      why: `node-gyp runs it ${librdkafka}`,
      present: command("python3"),
      apt: "python3",
    },
    {
      what: "prometheus",
      why: "the metrics tests scrape the app with a real Prometheus server (/usr/bin/prometheus, which they start themselves; the package's own service is not used)",
      present: () => {
        try {
          accessSync("/usr/bin/prometheus", constants.X_OK);
          return true;
        } catch {
          return false;
        }
      },
      apt: "prometheus",
    },
    {
      what: "chromium",
      why: "the AsyncAPI viewer test loads the page in headless Chromium (/usr/bin/chromium, driven by playwright-core)",
      present: () => {
        try {
          accessSync("/usr/bin/chromium", constants.X_OK);
          return true;
        } catch {
          return false;
        }
      },
      apt: "chromium",
    },
  ];
  for (const [deb, pc] of [
    ["zlib1g-dev", "zlib"],
    ["libssl-dev", "openssl"],
    ["libzstd-dev", "libzstd"],
    ["liblz4-dev", "liblz4"],
    ["libsasl2-dev", "libsasl2"],
    ["libcurl4-openssl-dev", "libcurl"],
  ]) {
    all.push({ what: `${deb} (${pc})`, why: librdkafka, present: library(deb, pc), apt: deb });
  }
  if (options.interop) {
    all.push(
      {
        what: "protoc",
        why: "the interop program's pulsar crate compiles Pulsar's protocol with it",
        present: command("protoc"),
        apt: "protobuf-compiler",
      },
      {
        what: "cargo (Rust 1.85 or newer)",
        why: "the interop tests build RustStream's own services from tooling/interop",
        present: () => answers("cargo"),
        fix: "install Rust with rustup (https://rustup.rs), or set RUSTSTREAM_SKIP_INTEROP=1 to run without the interop suites (they then show as skipped, saying why)",
      },
    );
  }
  return all;
}

const isRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** Installs or names what the test command needs; returns only when everything is there. */
export function ensureSystem(/** @type {{ interop: boolean }} */ options) {
  const missing = pieces(options).filter((p) => !p.present());
  const viaApt = missing.filter((p) => p.apt !== undefined && p.fix === undefined);
  if (viaApt.length > 0 && isRoot && command("apt-get")()) {
    const names = viaApt.map((p) => /** @type {string} */ (p.apt));
    const fix = `run \`apt-get update && apt-get install -y ${names.join(" ")}\` yourself and read its error`;
    say(`installing Debian packages the tests need: ${names.join(" ")}`);
    step("apt-get update", ["apt-get", "update", "-qq"], { fix, quiet: true });
    // The servers among them (rabbitmq-server, prometheus) would start their system services.
    const release = holdServiceStarts();
    try {
      step(
        "apt-get install",
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", ...names],
        {
          fix,
          quiet: true,
          env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
        },
      );
    } finally {
      release();
    }
  }
  const still = pieces(options).filter((p) => !p.present());
  if (still.length > 0) {
    const lines = still.map((p) => {
      const how = p.fix ?? `sudo apt-get install -y ${p.apt}`;
      return `  - ${p.what}, ${p.why}: ${how}`;
    });
    const apt = still.filter((p) => p.fix === undefined).map((p) => p.apt);
    const all =
      apt.length > 0
        ? ` (the Debian packages at once: \`sudo apt-get install -y ${apt.join(" ")}\`)`
        : "";
    fail(
      `the tests need what this machine lacks${isRoot ? "" : " (not root, so nothing was installed)"}:\n${lines.join("\n")}`,
      `install each piece above${all}, then run the command again`,
    );
  }
  ensureHostname();
}

/** Pulsar's bookie looks up the machine's own host name; a machine that cannot resolve it gets it on loopback. */
function ensureHostname() {
  const name = hostname();
  if (spawnSync("getent", ["hosts", name], { stdio: "ignore" }).status === 0) return;
  if (!isRoot) {
    fail(
      `this machine's host name ${name} does not resolve, and Pulsar's bookie looks it up`,
      `add it on loopback: \`echo "127.0.0.1 ${name}" | sudo tee -a /etc/hosts\``,
    );
  }
  say(`adding ${name} to /etc/hosts (Pulsar's bookie looks up the machine's own host name)`);
  appendFileSync("/etc/hosts", `127.0.0.1 ${name}\n`);
}
