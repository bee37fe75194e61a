// Which JavaScript runtime the process runs on. Bun and Deno both answer Node's APIs (`process`,
// `node:net`...), so a library reads them the same way everywhere; what differs is what their Node
// compatibility does not cover, a native addon built for Node's ABI above all, which a broker
// refuses at connect by naming this runtime and the way that runs on it.

/** The runtimes the project is tested on. */
export type RuntimeName = "node" | "bun" | "deno";

/** The runtime this process runs on: Deno and Bun each mark themselves; anything else is Node. */
export function runtimeName(): RuntimeName {
  if ("Deno" in globalThis) return "deno";
  if (typeof process !== "undefined" && process.versions?.bun !== undefined) return "bun";
  return "node";
}

/** The runtime with its version, for messages: "Bun 1.4.5", "Deno 2.9.6", "Node 24.22.3". */
export function runtimeTitle(): string {
  const name = runtimeName();
  if (name === "deno") {
    const deno = (globalThis as { Deno?: { version?: { deno?: string } } }).Deno;
    return `Deno ${deno?.version?.deno ?? "(version unknown)"}`;
  }
  if (name === "bun") return `Bun ${process.versions.bun}`;
  return `Node ${process.versions.node}`;
}
