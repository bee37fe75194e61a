// A real Prometheus server for the tests: Debian's /usr/bin/prometheus started on a free loopback
// port with a temporary config and data folder, scraping one target every second, read back through
// its HTTP query API.
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const binary = "/usr/bin/prometheus";

export interface Prometheus {
  readonly url: string;
  /** Resolves once Prometheus has scraped the target successfully after `since` (epoch ms). */
  scrapedAfter(since: number): Promise<void>;
  /** An instant query: each series' labels and value. */
  query(promql: string): Promise<Sample[]>;
  stop(): Promise<void>;
}

export interface Sample {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts Prometheus scraping `target` (an http://127.0.0.1:port URL) at `/metrics` every second. */
export async function startPrometheus(target: string): Promise<Prometheus> {
  try {
    accessSync(binary, constants.X_OK);
  } catch {
    throw new Error(
      `${binary} is missing: these tests scrape with a real Prometheus server. Install Debian's package (\`apt-get install -y prometheus\`; \`npm test\` does it as root through tooling/setup/system.mjs)`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), "rs-prometheus-"));
  const config = join(dir, "prometheus.yml");
  const { host } = new URL(target);
  writeFileSync(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "scrape_configs:",
      "  - job_name: ruststream",
      "    metrics_path: /metrics",
      "    static_configs:",
      `      - targets: ["${host}"]`,
      "",
    ].join("\n"),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const output: string[] = [];
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(`Prometheus ready at ${url}`, 20_000, async () => {
      if (child.exitCode !== null) {
        throw new Error(
          `prometheus exited with ${child.exitCode}: ${output.join("").slice(-2000)}`,
        );
      }
      const response = await fetch(`${url}/-/ready`).catch(() => undefined);
      return response?.status === 200;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${url}${path}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`${path}: ${body.error ?? response.status}`);
    return body.data;
  };
  return {
    url,
    async scrapedAfter(since) {
      interface Targets {
        activeTargets: { health: string; lastScrape: string; lastError: string }[];
      }
      await until(
        `a scrape of ${target} after ${new Date(since).toISOString()}`,
        15_000,
        async () => {
          const [active] = (await api<Targets>("/api/v1/targets")).activeTargets;
          if (active === undefined) return false;
          return active.health === "up" && Date.parse(active.lastScrape) > since;
        },
      );
    },
    async query(promql) {
      interface Vector {
        result: { metric: Record<string, string>; value: [number, string] }[];
      }
      const data = await api<Vector>(`/api/v1/query?query=${encodeURIComponent(promql)}`);
      return data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
    },
    stop,
  };
}

async function until(what: string, ms: number, ok: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`still waiting after ${ms} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
