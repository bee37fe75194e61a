import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureNatsServer } from "@ruststream/tooling-testkit";
import { eventually } from "./env.live.js";

/**
 * A nats-server of the test's own, on a free port of its own (never the shared one), for tests
 * that stop or kill it. With `jetStream`, file storage in a folder of its own, kept across its
 * restarts and removed by `dispose`.
 */
export class OwnServer {
  readonly port: number;
  readonly #storeDir: string | undefined;
  #child: ChildProcess | undefined;

  private constructor(port: number, storeDir: string | undefined) {
    this.port = port;
    this.#storeDir = storeDir;
  }

  static async start(options: { readonly jetStream?: boolean } = {}): Promise<OwnServer> {
    const port = await freePort();
    const server = new OwnServer(
      port,
      options.jetStream ? mkdtempSync(join(tmpdir(), "ruststream-nats-")) : undefined,
    );
    await server.restart();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts it (again, on the same port and store) and resolves once it accepts connections. */
  async restart(): Promise<void> {
    const binary = await ensureNatsServer(() => {});
    const args = ["-a", "127.0.0.1", "-p", String(this.port)];
    if (this.#storeDir !== undefined) args.push("-js", "-sd", this.#storeDir);
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
    if (this.#storeDir !== undefined) rmSync(this.#storeDir, { recursive: true, force: true });
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
