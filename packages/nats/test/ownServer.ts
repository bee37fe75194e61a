import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureNatsServer } from "@ruststream/tooling-testkit";
import { eventually } from "./env.live.js";

/**
 * A nats-server of the test's own, on a free port of its own (never the shared one), for tests
 * that stop or kill it, or need a configuration of their own. Its files (with `jetStream`, its
 * file storage, kept across its restarts; its configuration and its log) are in a folder of its
 * own, removed by `dispose`.
 */
export class OwnServer {
  readonly port: number;
  readonly #dir: string;
  readonly #jetStream: boolean;
  readonly #config: string | undefined;
  #child: ChildProcess | undefined;

  private constructor(port: number, jetStream: boolean, config: string | undefined) {
    this.port = port;
    this.#dir = mkdtempSync(join(tmpdir(), "ruststream-nats-"));
    this.#jetStream = jetStream;
    if (config !== undefined) {
      this.#config = join(this.#dir, "server.conf");
      writeFileSync(this.#config, config);
    }
  }

  /** With `config`, the server reads it (the port and the storage are the command line's). */
  static async start(
    options: { readonly jetStream?: boolean; readonly config?: string } = {},
  ): Promise<OwnServer> {
    const server = new OwnServer(await freePort(), options.jetStream === true, options.config);
    await server.restart();
    return server;
  }

  /** What the server logged so far (its errors: a permission it refused, say), with the times. */
  log(): string {
    try {
      return readFileSync(join(this.#dir, "server.log"), "utf8");
    } catch {
      return "";
    }
  }

  /** Writes `config` in place of the one it started with and has the server reload it (SIGHUP). */
  reconfigure(config: string): void {
    if (this.#config === undefined) throw new Error("the server was started without a config");
    writeFileSync(this.#config, config);
    this.#child?.kill("SIGHUP");
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts it (again, on the same port and store) and resolves once it accepts connections. */
  async restart(): Promise<void> {
    const binary = await ensureNatsServer(() => {});
    const args = ["-a", "127.0.0.1", "-p", String(this.port), "-l", join(this.#dir, "server.log")];
    if (this.#config !== undefined) args.push("-c", this.#config);
    if (this.#jetStream) args.push("-js", "-sd", join(this.#dir, "data"));
    this.#child = spawn(binary, args, { stdio: "ignore" });
    await eventually(() => accepts(this.port), 10_000, `the test's own server on ${this.port}`);
  }

  /** SIGKILL, as a crash would; resolves once the process is gone. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }

  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
