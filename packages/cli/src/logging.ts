import { consoleLogger, type Logger, type LogLevel } from "@ruststream/core";
import { jsonLogger } from "./jsonLogger.js";

export const logLevels = ["debug", "info", "warn", "error"] as const satisfies readonly LogLevel[];
export const logFormats = ["pretty", "json"] as const;
export type LogFormat = (typeof logFormats)[number];

/** The logger every command logs through: core's readable lines, or JSON lines; both on stderr. */
export function makeLogger(format: LogFormat, level: LogLevel): Logger {
  return format === "json" ? jsonLogger({ level }) : consoleLogger({ level });
}
