/**
 * A failure reported in one message without a stack: the message is for the person at the terminal
 * and names the fix. `usage` marks a wrong command line (exit 2) rather than a failed run (exit 1).
 */
export class CreateError extends Error {
  readonly exitCode: 1 | 2;

  constructor(message: string, exitCode: 1 | 2 = 1) {
    super(message);
    this.name = "CreateError";
    this.exitCode = exitCode;
  }
}

/** The command line is wrong: exit 2, pointing at the help. */
export function usageError(message: string): CreateError {
  return new CreateError(`${message}\n(see \`npm init @ruststream -- --help\`)`, 2);
}
