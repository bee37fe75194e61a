/** How the process ends: 0 clean, 1 a failure, 2 a usage error (the command line itself is wrong). */
export type ExitCode = 0 | 1 | 2;

/**
 * A failure the CLI reports in one message and an exit code, without a stack: the message is for the
 * person at the terminal and names the fix. Anything else that escapes is a bug and shows its stack.
 */
export class CliError extends Error {
  readonly exitCode: 1 | 2;

  constructor(message: string, exitCode: 1 | 2 = 1, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

/** The command line is wrong: exit 2, with a pointer to the command's help. */
export function usageError(message: string, command?: string): CliError {
  const help = command === undefined ? "ruststream --help" : `ruststream ${command} --help`;
  return new CliError(`${message}\n(see \`${help}\`)`, 2);
}
