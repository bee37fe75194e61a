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

export interface ConsoleLoggerOptions {
  /** Lines below this level are skipped (default `info`). */
  readonly level?: LogLevel;
  /** Where lines go (default: stderr). */
  readonly write?: (line: string) => void;
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
  const min = levelRank[options.level ?? "info"];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const make = (bound: LogFields): Logger => {
    const method =
      (level: LogLevel): LogMethod =>
      (first: LogFields | string, message?: string) => {
        if (levelRank[level] < min) return;
        const fields = typeof first === "string" ? bound : { ...bound, ...first };
        const text = typeof first === "string" ? first : (message ?? "");
        const time = new Date().toISOString().slice(11, 23);
        const pairs = Object.entries(fields)
          .filter(([, value]) => value !== undefined)
          .map(([key, value]) => `${key}=${formatValue(value)}`)
          .join(" ");
        write(`${time} ${level.toUpperCase().padEnd(5)} ${text}${pairs === "" ? "" : ` ${pairs}`}`);
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
