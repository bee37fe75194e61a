import type { LogFields, Logger, LogLevel, LogMethod } from "@ruststream/core";

export interface JsonLoggerOptions {
  /** Lines below this level are skipped (default `info`). */
  readonly level?: LogLevel;
  /** Where lines go (default: stderr). */
  readonly write?: (line: string) => void;
}

const levelRank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** An error as data a log pipeline keeps: its name, message, code, stack and cause. */
function errorFields(error: Error, seen: WeakSet<object>): Record<string, unknown> {
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: error.message,
    ...(code === undefined ? {} : { code }),
    ...(error.stack === undefined ? {} : { stack: error.stack }),
    ...(error.cause === undefined ? {} : { cause: plain(error.cause, seen) }),
  };
}

/** A value JSON can carry: errors spelled out, bigints as text, cycles cut. */
function plain(value: unknown, seen: WeakSet<object>): unknown {
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object" || value === null) return value;
  if (seen.has(value)) return "[Circular]";
  seen.add(value);
  if (value instanceof Error) return errorFields(value, seen);
  if (value instanceof Uint8Array) return `<${value.byteLength} bytes>`;
  if (Array.isArray(value)) return value.map((item) => plain(item, seen));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = plain(item, seen);
  return out;
}

/**
 * One JSON object per line, for a log pipeline: `{"time":"…","level":"info","msg":"ready",…}`, the
 * fields beside `msg` as pino writes them. Errors keep their stack and cause.
 */
export function jsonLogger(options: JsonLoggerOptions = {}): Logger {
  const min = levelRank[options.level ?? "info"];
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const make = (bound: LogFields): Logger => {
    const method =
      (level: LogLevel): LogMethod =>
      (first: LogFields | string, message?: string) => {
        if (levelRank[level] < min) return;
        const fields = typeof first === "string" ? bound : { ...bound, ...first };
        const msg = typeof first === "string" ? first : message;
        const line = plain(
          {
            time: new Date().toISOString(),
            level,
            ...(msg === undefined ? {} : { msg }),
            ...fields,
          },
          new WeakSet(),
        );
        write(JSON.stringify(line));
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
