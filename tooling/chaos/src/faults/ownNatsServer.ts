// A nats-server of the scenario's own, on a free port, JetStream on file storage in a folder of its
// own: the scenario that restarts the server restarts this one, never the shared server others'
// tests use. Killed with SIGKILL, as a crash would, and started again on its files.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureNatsServer } from "@ruststream/tooling-testkit";
import { freePort } from "./toxiproxy.js";

export class OwnNatsServer {
  readonly port: number;
  readonly #binary: string;
  readonly #storeDir: string;
  #child: ChildProcess | undefined;

  private constructor(binary: string, port: number) {
    this.#binary = binary;
    this.port = port;
    this.#storeDir = mkdtempSync(join(tmpdir(), "ruststream-chaos-nats-"));
  }

  static async start(log: (line: string) => void): Promise<OwnNatsServer> {
    const server = new OwnNatsServer(await ensureNatsServer(log), await freePort());
    await server.#start();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  async #start(): Promise<void> {
    this.#child = spawn(
      this.#binary,
      ["-a", "127.0.0.1", "-p", String(this.port), "-js", "-sd", this.#storeDir],
      { stdio: "ignore" },
    );
    const deadline = Date.now() + 30_000;
    while (!(await accepts(this.port))) {
      if (Date.now() > deadline) throw new Error(`our nats-server on ${this.port} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** SIGKILL, then started again on its files. */
  async restart(): Promise<void> {
    await this.#kill();
    await this.#start();
  }

  async #kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }

  async dispose(): Promise<void> {
    await this.#kill();
    rmSync(this.#storeDir, { recursive: true, force: true });
  }
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
