/** Structured fields attached to a log line. */
export type LogFields = Readonly<Record<string, unknown>>;

/** One level of a {@link Logger}: pino's call shape, fields first, message second. */
export interface LogMethod {
  (fields: LogFields, message?: string): void;
  (message: string): void;
}

/**
 * What the runtime logs through. pino's loggers satisfy it as they are; so does anything with the
 * same call shape. `child` adds fields to every line (the runtime gives each subscriber one).
 */
export interface Logger {
  readonly debug: LogMethod;
  readonly info: LogMethod;
  readonly warn: LogMethod;
  readonly error: LogMethod;
  child(fields: LogFields): Logger;
}

const nothing = (): void => {};

/** Says nothing: the default of `start()` and of tests. */
export const silentLogger: Logger = {
  debug: nothing,
  info: nothing,
  warn: nothing,
  error: nothing,
  child: () => silentLogger,
};

export type LogLevel = "debug" | "info" | "warn" | "error";

const levelRank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LineLoggerOptions {
  /** Lines below this level are skipped (default `info`). */
  readonly level?: LogLevel;
  /** Where lines go (default: stderr). */
  readonly write?: (line: string) => void;
}

export type ConsoleLoggerOptions = LineLoggerOptions;

/** One call of a line logger's method, the fields bound by `child` merged in, before formatting. */
export interface LogEntry {
  readonly level: LogLevel;
  /** `undefined` when the call gave fields only. */
  readonly message: string | undefined;
  readonly fields: LogFields;
}

/**
 * A logger that writes each call at or above `level` as one line `format` makes of it: the body
 * every line format shares (levels, bound fields, `child`), so a format is only its formatting.
 */
export function lineLogger(
  format: (entry: LogEntry) => string,
  options: LineLoggerOptions = {},
): Logger {
  const min = levelRank[options.level ?? "info"];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const make = (bound: LogFields): Logger => {
    const method =
      (level: LogLevel): LogMethod =>
      (first: LogFields | string, message?: string) => {
        if (levelRank[level] < min) return;
        write(
          typeof first === "string"
            ? format({ level, message: first, fields: bound })
            : format({ level, message, fields: { ...bound, ...first } }),
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
  return make({});
}

function formatValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === "string") return /^[\w.:/@-]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === "bigint") return value.toString();
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Readable lines for a person at a terminal: `12:00:01.250 INFO  accepted subscriber=orders id=1`. */
export function consoleLogger(options: ConsoleLoggerOptions = {}): Logger {
  return lineLogger(({ level, message, fields }) => {
    const time = new Date().toISOString().slice(11, 23);
    const pairs = Object.entries(fields)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${key}=${formatValue(value)}`)
      .join(" ");
    return `${time} ${level.toUpperCase().padEnd(5)} ${message ?? ""}${pairs === "" ? "" : ` ${pairs}`}`;
  }, options);
}
