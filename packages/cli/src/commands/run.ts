import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { LogLevel } from "@ruststream/core";
import { choiceFlag, integerFlag, moduleArgument, parsedOrUsage } from "../args.js";
import { type ExitCode, usageError } from "../cliError.js";
import { runHelp } from "../help.js";
import { type LogFormat, logFormats, logLevels, makeLogger } from "../logging.js";
import { writeOut } from "../output.js";
import { runService } from "../runService.js";
import { workerEnv } from "../supervise/protocol.js";
import { watchService } from "../supervise/watch.js";
import { runWorkers } from "../supervise/workers.js";

const options = {
  app: { type: "string" },
  "log-level": { type: "string" },
  "log-format": { type: "string" },
  watch: { type: "boolean" },
  workers: { type: "string" },
  "http-port": { type: "string" },
  metrics: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

interface RunFlags {
  readonly module: string;
  readonly app: string | undefined;
  readonly level: LogLevel;
  readonly format: LogFormat;
  readonly watch: boolean;
  readonly workers: number | undefined;
  readonly httpPort: number | undefined;
  readonly metrics: boolean;
}

function readFlags(args: readonly string[]): RunFlags | "help" {
  const { values, positionals } = parsedOrUsage("run", () =>
    parseArgs({ args: [...args], options, allowPositionals: true, strict: true }),
  );
  if (values.help === true) return "help";
  const flags: RunFlags = {
    module: moduleArgument("run", positionals),
    app: values.app,
    level: choiceFlag("run", "log-level", values["log-level"] ?? "info", logLevels),
    format: choiceFlag("run", "log-format", values["log-format"] ?? "pretty", logFormats),
    watch: values.watch === true,
    workers:
      values.workers === undefined
        ? undefined
        : integerFlag("run", "workers", values.workers, 1, 256),
    httpPort:
      values["http-port"] === undefined
        ? undefined
        : integerFlag("run", "http-port", values["http-port"], 0, 65_535),
    metrics: values.metrics === true,
  };
  if (flags.watch && flags.workers !== undefined) {
    throw usageError(
      "--watch and --workers do not go together: watch one process while you edit, run workers in production",
      "run",
    );
  }
  if (
    flags.workers !== undefined &&
    flags.httpPort !== undefined &&
    flags.httpPort !== 0 &&
    flags.httpPort + flags.workers - 1 > 65_535
  ) {
    throw usageError(
      `--http-port ${flags.httpPort} with --workers ${flags.workers}: worker k serves on port ${flags.httpPort}+k-1, past 65535; give a lower port`,
      "run",
    );
  }
  if (flags.metrics && flags.httpPort === undefined) {
    throw usageError(
      "--metrics serves /metrics on the operations server: give its port with --http-port P",
      "run",
    );
  }
  return flags;
}

/** The arguments of one service process: this command line without --watch and --workers. */
function serviceArgs(flags: RunFlags, httpPort: number | undefined): string[] {
  return [
    "run",
    resolve(flags.module),
    "--log-level",
    flags.level,
    "--log-format",
    flags.format,
    ...(flags.app === undefined ? [] : ["--app", flags.app]),
    ...(httpPort === undefined ? [] : ["--http-port", String(httpPort)]),
    ...(flags.metrics ? ["--metrics"] : []),
  ];
}

/** `ruststream run <module>`: one service in this process, or supervised by --watch or --workers. */
export async function runCommand(args: readonly string[]): Promise<ExitCode> {
  const flags = readFlags(args);
  if (flags === "help") {
    await writeOut(runHelp);
    return 0;
  }
  const base = makeLogger(flags.format, flags.level);
  if (flags.watch) {
    return watchService({
      folder: dirname(resolve(flags.module)),
      childArgs: serviceArgs(flags, flags.httpPort),
      log: base.child({ supervisor: "watch" }),
    });
  }
  if (flags.workers !== undefined) {
    const port = flags.httpPort;
    return runWorkers({
      count: flags.workers,
      // Each worker has its own operations server: P for the first, P+1 for the second, and so on.
      childArgs: (worker) =>
        serviceArgs(flags, port === undefined || port === 0 ? port : port + worker - 1),
      log: base.child({ supervisor: "workers" }),
    });
  }
  const worker = process.env[workerEnv];
  return runService({
    modulePath: flags.module,
    ...(flags.app === undefined ? {} : { exportName: flags.app }),
    log: worker === undefined ? base : base.child({ worker: Number(worker) }),
    ...(flags.httpPort === undefined ? {} : { httpPort: flags.httpPort }),
    metrics: flags.metrics,
  });
}
