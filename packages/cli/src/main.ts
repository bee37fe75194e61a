import { CliError, type ExitCode, usageError } from "./cliError.js";
import { asyncapiHelp, mainHelp, runHelp } from "./help.js";
import { writeErr, writeOut } from "./output.js";
import { cliVersion } from "./version.js";

const commandHelp: Readonly<Record<string, string>> = { run: runHelp, asyncapi: asyncapiHelp };

async function dispatch(argv: readonly string[]): Promise<ExitCode> {
  const [command, ...rest] = argv;
  switch (command) {
    // Each command is loaded when asked for: `run` never loads the viewer's bundle, nor `asyncapi`
    // the supervisors.
    case "run":
      return (await import("./commands/run.js")).runCommand(rest);
    case "asyncapi":
      return (await import("./commands/asyncapi.js")).asyncapiCommand(rest);
    case "help": {
      const topic = rest[0] === undefined ? mainHelp : commandHelp[rest[0]];
      if (topic === undefined) throw usageError(`help ${rest[0]}: no such command`);
      await writeOut(topic);
      return 0;
    }
    case "-h":
    case "--help":
      await writeOut(mainHelp);
      return 0;
    case "-v":
    case "--version":
      await writeOut(`${cliVersion()}\n`);
      return 0;
    case undefined:
      writeErr(mainHelp);
      return 2;
    default:
      throw usageError(
        command.startsWith("-")
          ? `${command}: give a command first (run, asyncapi)`
          : `${command}: no such command; the commands are run and asyncapi`,
      );
  }
}

/**
 * The `ruststream` command: runs `argv` (the arguments after the program) and resolves with the
 * exit code. A failure it can explain is one message on stderr; anything else shows its stack.
 */
export async function main(argv: readonly string[]): Promise<ExitCode> {
  try {
    return await dispatch(argv);
  } catch (error) {
    if (error instanceof CliError) {
      writeErr(`ruststream: ${error.message}`);
      return error.exitCode;
    }
    writeErr(
      `ruststream: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    return 1;
  }
}
