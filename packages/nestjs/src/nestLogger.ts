import { Logger as NestLogger } from "@nestjs/common";
import type { LogFields, Logger, LogMethod } from "@ruststream/core";

/**
 * The runtime's log lines through Nest's own logger, so a failed attempt, a dead letter or a lost
 * connection shows where the application's other lines go (and its log level applies).
 */
export function nestLogger(context: string, bound: LogFields = {}): Logger {
  const nest = new NestLogger(context);
  const method =
    (write: (message: string) => void): LogMethod =>
    (first: LogFields | string, message?: string) => {
      const fields = typeof first === "string" ? bound : { ...bound, ...first };
      const text = typeof first === "string" ? first : (message ?? "");
      write(Object.keys(fields).length === 0 ? text : `${text} ${describe(fields)}`);
    };
  return {
    debug: method((m) => nest.debug(m)),
    info: method((m) => nest.log(m)),
    warn: method((m) => nest.warn(m)),
    error: method((m) => nest.error(m)),
    child: (fields) => nestLogger(context, { ...bound, ...fields }),
  };
}

// Fields are for a reader: an error as its name and message, a bigint as its digits, and a value
// JSON cannot hold (a cycle) as what String makes of it, never a throw from a log line.
function describe(fields: LogFields): string {
  try {
    return JSON.stringify(fields, (_key, value: unknown) => {
      if (value instanceof Error) return `${value.name}: ${value.message}`;
      return typeof value === "bigint" ? value.toString() : value;
    });
  } catch {
    return String(fields);
  }
}
