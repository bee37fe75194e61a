// One Toxiproxy server for a run, on loopback, and the proxies and toxics of its HTTP API.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { toxiproxyBinary } from "./toxiproxyInstall.js";

/** A free loopback port, as the kernel hands one out. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The network faults a proxy injects. */
export type NetworkFault = "latency" | "cut" | "stall" | "bandwidth";

export class Toxiproxy {
  readonly #child: ChildProcess;
  readonly #api: string;
  /** Proxies faulted together under one name (a cluster's nodes), by that name. */
  readonly #groups = new Map<string, readonly string[]>();

  private constructor(child: ChildProcess, api: string) {
    this.#child = child;
    this.#api = api;
  }

  static async start(log: (line: string) => void): Promise<Toxiproxy> {
    const binary = toxiproxyBinary(log);
    const port = await freePort();
    const child = spawn(binary, ["-host", "127.0.0.1", "-port", String(port)], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const proxy = new Toxiproxy(child, `http://127.0.0.1:${port}`);
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await proxy.#call("GET", "/version");
        return proxy;
      } catch (error) {
        if (child.exitCode !== null || Date.now() > deadline) {
          child.kill("SIGKILL");
          throw new Error(`Toxiproxy did not start on port ${port}: ${String(error)}\n${stderr}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  async #call(method: string, path: string, body?: unknown): Promise<unknown> {
    const response = await fetch(`${this.#api}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`Toxiproxy ${method} ${path}: ${response.status} ${text}`);
    // Most answers are JSON; /version is plain text.
    return response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
  }

  /** A proxy from a fresh loopback port to `upstream`; answers the port to connect to. */
  async proxy(name: string, upstream: string): Promise<number> {
    const port = await freePort();
    await this.#call("POST", "/proxies", {
      name,
      listen: `127.0.0.1:${port}`,
      upstream,
      enabled: true,
    });
    return port;
  }

  /**
   * Proxies on fixed addresses, one per route (a cluster whose nodes advertise those addresses to
   * clients bootstrapped through them), injected and healed together as `name`. `remove` frees the
   * addresses for the next scenario.
   */
  async proxyGroup(
    name: string,
    routes: readonly { readonly listen: string; readonly upstream: string }[],
  ): Promise<void> {
    const members = routes.map((_, i) => `${name}-${i + 1}`);
    this.#groups.set(name, members);
    for (const [i, route] of routes.entries()) {
      await this.#call("POST", "/proxies", { name: members[i], ...route, enabled: true });
    }
  }

  /** Deletes proxy `name` (or its group's), closing what goes through it. */
  async remove(name: string): Promise<void> {
    for (const member of this.#members(name)) {
      await this.#call("DELETE", `/proxies/${member}`);
    }
    this.#groups.delete(name);
  }

  /** Injects `fault` on proxy `name` (every proxy of its group), both directions; `heal` takes it away. */
  async inject(name: string, fault: NetworkFault): Promise<void> {
    for (const member of this.#members(name)) await this.#injectOne(member, fault);
  }

  async heal(name: string, fault: NetworkFault): Promise<void> {
    for (const member of this.#members(name)) await this.#healOne(member, fault);
  }

  #members(name: string): readonly string[] {
    return this.#groups.get(name) ?? [name];
  }

  async #injectOne(name: string, fault: NetworkFault): Promise<void> {
    if (fault === "cut") {
      // Disabling the proxy closes every connection through it and refuses new ones.
      await this.#call("POST", `/proxies/${name}`, { enabled: false });
      return;
    }
    const toxic = {
      latency: { type: "latency", attributes: { latency: 400, jitter: 200 } },
      // A timeout of 0 holds the data and never closes the connection: a peer that stalls.
      stall: { type: "timeout", attributes: { timeout: 0 } },
      bandwidth: { type: "bandwidth", attributes: { rate: 16 } },
    }[fault];
    for (const stream of ["upstream", "downstream"]) {
      await this.#call("POST", `/proxies/${name}/toxics`, {
        name: `${fault}-${stream}`,
        stream,
        toxicity: 1,
        ...toxic,
      });
    }
  }

  async #healOne(name: string, fault: NetworkFault): Promise<void> {
    if (fault === "cut") {
      await this.#call("POST", `/proxies/${name}`, { enabled: true });
      return;
    }
    for (const stream of ["upstream", "downstream"]) {
      await this.#call("DELETE", `/proxies/${name}/toxics/${fault}-${stream}`);
    }
  }

  stop(): void {
    this.#child.kill("SIGKILL");
  }
}
