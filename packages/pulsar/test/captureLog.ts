// A logger that keeps its lines, for tests that check what was logged at error.
import type { LogFields, Logger, LogMethod } from "@ruststream/core";

export interface Line {
  readonly level: string;
  readonly fields: LogFields;
  readonly message: string;
}

/** A logger that keeps its lines, in pino's call shape. */
export function capture(): { logger: Logger; errors: () => Line[] } {
  const lines: Line[] = [];
  const make = (bound: LogFields): Logger => {
    const method =
      (level: string): LogMethod =>
      (first: LogFields | string, message?: string) => {
        lines.push(
          typeof first === "string"
            ? { level, fields: bound, message: first }
            : { level, fields: { ...bound, ...first }, message: message ?? "" },
        );
      };
    return {
      debug: method("debug"),
      info: method("info"),
      warn: method("warn"),
      error: method("error"),
      child: (fields) => make({ ...bound, ...fields }),
    };
  };
  return { logger: make({}), errors: () => lines.filter((l) => l.level === "error") };
}
