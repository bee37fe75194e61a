import { usageError } from "./cliError.js";

/**
 * Runs `node:util`'s parseArgs (strict, as `parse` calls it) and turns its errors into usage errors
 * (exit 2) that point at the command's help.
 */
export function parsedOrUsage<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    throw usageError(error instanceof Error ? error.message : String(error), command);
  }
}

/** A whole number within [min, max], or a usage error naming the flag. */
export function integerFlag(
  command: string,
  flag: string,
  text: string,
  min: number,
  max: number,
): number {
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw usageError(`--${flag} ${text}: give a whole number from ${min} to ${max}`, command);
  }
  return value;
}

/** One of `choices`, or a usage error listing them. */
export function choiceFlag<T extends string>(
  command: string,
  flag: string,
  text: string,
  choices: readonly T[],
): T {
  if ((choices as readonly string[]).includes(text)) return text as T;
  throw usageError(`--${flag} ${text}: give one of ${choices.join(", ")}`, command);
}

/** Exactly one positional argument, the module. */
export function moduleArgument(command: string, positionals: readonly string[]): string {
  const [module, ...extra] = positionals;
  if (module === undefined) {
    throw usageError(`${command} needs the service's module, for example src/app.ts`, command);
  }
  if (extra.length > 0) {
    throw usageError(`${command} takes one module; also given: ${extra.join(" ")}`, command);
  }
  return module;
}
