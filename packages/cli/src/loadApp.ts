import { statSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { RustStream } from "@ruststream/core";
import { isRustStreamApp } from "./appGuard.js";
import { CliError } from "./cliError.js";
import { summariseExports } from "./exportsSummary.js";
import { importFrom } from "./importFrom.js";
import { describeLoadError } from "./loadError.js";

export interface LoadAppOptions {
  /** The export that holds the app (default `app`). */
  readonly exportName?: string;
  /** What a relative module path is relative to (default: the working directory). */
  readonly cwd?: string;
}

/** A service's app and where it came from. */
export interface LoadedApp {
  readonly app: RustStream;
  /** The module's absolute path. */
  readonly path: string;
  /** The module's file URL: what the service's own dependencies resolve from. */
  readonly url: string;
  readonly exportName: string;
}

/**
 * Imports a module with TypeScript running without a build (`importFrom`: tsx's `tsImport` on Node
 * and Deno, scoped to this import's graph; Bun's own TypeScript on Bun).
 */
export async function importModule(
  modulePath: string,
  cwd: string = process.cwd(),
): Promise<{ path: string; url: string; namespace: Readonly<Record<string, unknown>> }> {
  const path = resolve(cwd, modulePath);
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch {
    throw new CliError(
      `${modulePath}: no such file (resolved to ${path}); give the path of the service's module from here, for example src/app.ts`,
    );
  }
  if (!isFile) {
    throw new CliError(
      `${modulePath} is a folder: give the module that exports the app, for example ${modulePath}/app.ts`,
    );
  }
  const url = pathToFileURL(path).href;
  try {
    const namespace = (await importFrom(url, pathToFileURL(`${cwd}/`).href)) as Record<
      string,
      unknown
    >;
    return { path, url, namespace };
  } catch (error) {
    throw new CliError(`${modulePath} failed to load:\n${describeLoadError(error)}`, 1, {
      cause: error,
    });
  }
}

/**
 * Loads the service's module and returns the RustStream app it exports under `exportName`. A module
 * without one gets an error naming what it does export and how to fix it.
 */
export async function loadApp(
  modulePath: string,
  options: LoadAppOptions = {},
): Promise<LoadedApp> {
  const exportName = options.exportName ?? "app";
  const { path, url, namespace } = await importModule(modulePath, options.cwd);
  const value = exportOf(namespace, exportName);
  if (isRustStreamApp(value)) return { app: value, path, url, exportName };
  throw new CliError(noAppMessage(modulePath, exportName, namespace, value));
}

/** The named export, looking through a CommonJS module's `default` (its `module.exports`) too. */
function exportOf(namespace: Readonly<Record<string, unknown>>, name: string): unknown {
  if (name in namespace) return namespace[name];
  const fallback = namespace.default;
  if (typeof fallback === "object" && fallback !== null && name in fallback) {
    return (fallback as Record<string, unknown>)[name];
  }
  return undefined;
}

function noAppMessage(
  modulePath: string,
  exportName: string,
  namespace: Readonly<Record<string, unknown>>,
  value: unknown,
): string {
  const found =
    value === undefined
      ? `${modulePath} has no export named "${exportName}"`
      : `${modulePath} exports "${exportName}", but it is not a RustStream app`;
  const apps = Object.keys(namespace).filter((name) => isRustStreamApp(namespace[name]));
  const fix =
    apps.length > 0
      ? `run the app it does export with --app ${apps[0]}`
      : `export the app from the module, \`export const app = new RustStream({ name: "orders", version: "1.0.0" })\`, or name the export that holds it with --app <name>`;
  return `${found}.\nIt exports: ${summariseExports(namespace)}.\nFix: ${fix}.`;
}
