import { readFileSync } from "node:fs";
import { runtimeName } from "@ruststream/core/broker";

/** The executable and the arguments before a command's own that start this CLI again. */
export interface SelfCommand {
  readonly executable: string;
  readonly args: readonly string[];
}

/** A debugger port cannot be shared: the children run without the supervisor's --inspect. */
const withoutInspect = (flags: readonly string[]): string[] =>
  flags.filter((flag) => !flag.startsWith("--inspect"));

/**
 * Deno's own command line up to the script (`run -A --sloppy-imports ... bin.js`), read from
 * /proc/self/cmdline: Deno reports no flags in `process.execArgv`, and a child started with its
 * executable and Node's arguments runs as `deno run -A` with none of the parent's (not the
 * `--conditions` or `--sloppy-imports` a source run needs, nor narrower permissions). Undefined where
 * it cannot be read (no /proc, or no permission to read it) or does not end with this process's
 * arguments.
 */
function denoCommandLine(ownArgs: readonly string[]): string[] | undefined {
  let words: string[];
  try {
    words = readFileSync("/proc/self/cmdline", "utf8").split("\0");
  } catch {
    return undefined;
  }
  if (words.at(-1) === "") words.pop();
  const end = words.length - ownArgs.length;
  if (end < 2 || ownArgs.some((arg, i) => words[end + i] !== arg)) return undefined;
  return words.slice(1, end);
}

/**
 * How a supervisor starts `ruststream` again for a child: on the same runtime with the same flags (a
 * loader or `--conditions` the supervisor was started with applies to the service too). On Deno,
 * where the flags are not reported, its command line from /proc; where that cannot be read, `deno
 * run -A <script>`, what Deno itself makes of a Node-style command.
 */
export function selfCommand(): SelfCommand {
  const script = process.argv[1];
  if (script === undefined) throw new Error("process.argv[1] is not set: cannot start a child");
  if (runtimeName() === "deno") {
    const own = denoCommandLine(process.argv.slice(2));
    return {
      executable: process.execPath,
      args: own === undefined ? ["run", "-A", script] : withoutInspect(own),
    };
  }
  return { executable: process.execPath, args: [...withoutInspect(process.execArgv), script] };
}
