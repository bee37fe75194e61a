// @ruststream/cli: the `ruststream` command (bin), and the pieces it is made of for a program that
// wants them: loading a service's app from its module, the app guard, the JSON logger.
export { isRustStreamApp } from "./appGuard.js";
export type { ExitCode } from "./cliError.js";
export { CliError } from "./cliError.js";
export type { JsonLoggerOptions } from "./jsonLogger.js";
export { jsonLogger } from "./jsonLogger.js";
export type { LoadAppOptions, LoadedApp } from "./loadApp.js";
export { loadApp } from "./loadApp.js";
export { main } from "./main.js";
