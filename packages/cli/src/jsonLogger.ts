import { type LineLoggerOptions, type Logger, lineLogger } from "@ruststream/core";

export type JsonLoggerOptions = LineLoggerOptions;

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
  return lineLogger(
    ({ level, message, fields }) =>
      JSON.stringify(
        plain(
          {
            time: new Date().toISOString(),
            level,
            ...(message === undefined ? {} : { msg: message }),
            ...fields,
          },
          new WeakSet(),
        ),
      ),
    options,
  );
}
