import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { runtimeName } from "@ruststream/core/broker";

// A test's second process (a writer holding a file's lock, a consumer whose memory is measured, a
// supervisor) runs a TypeScript file of this workspace with its packages as source, on the runtime
// the test runs on. Each runtime has its own way to run one: a Node-style `--import tsx` on Deno
// runs as `deno run` without the `--import`, and the sources' `.js` specifiers of `.ts` files do
// not resolve there.

/** tsx resolved here (a dependency of this package), so a child started in any folder finds it. */
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

export interface ScriptCommandOptions {
  /** V8 flags for the child (`--expose-gc`): given as they are on Node and Bun, through `--v8-flags` on Deno. */
  readonly v8Flags?: readonly string[];
}

/**
 * The command line, executable first, that runs `script` (a TypeScript file of this workspace,
 * its arguments to follow) with the workspace's packages as source (`@ruststream/source`), on the
 * runtime running this code: on Node through tsx; on Bun with its own TypeScript; on Deno with its
 * own, `--sloppy-imports` for the sources' `.js` specifiers of `.ts` files.
 */
export function scriptCommand(script: string, options: ScriptCommandOptions = {}): string[] {
  const v8Flags = options.v8Flags ?? [];
  const source = "--conditions=@ruststream/source";
  switch (runtimeName()) {
    case "deno":
      return [
        process.execPath,
        "run",
        "-A",
        "--sloppy-imports",
        source,
        ...(v8Flags.length === 0 ? [] : [`--v8-flags=${v8Flags.join(",")}`]),
        script,
      ];
    case "bun":
      return [process.execPath, ...v8Flags, source, script];
    default:
      return [process.execPath, ...v8Flags, "--import", tsxLoader, source, script];
  }
}

/**
 * The environment of a process a test starts: this one's, without the IPC channel of the vitest
 * worker. Node drops `NODE_CHANNEL_FD` from `process.env` once it has opened the channel; Deno keeps
 * it, and a child started with it took the worker's channel (its descriptor is inherited) for its
 * own. A child given an IPC channel of its own (`stdio: [..., "ipc"]`) gets its variables anew.
 */
export function childEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_CHANNEL_FD;
  delete env.NODE_CHANNEL_SERIALIZATION_MODE;
  return env;
}
