import type { HttpRoutes, Logger, RustStream } from "@ruststream/core";
import { type HttpServer, health, serveHttp } from "@ruststream/health";
import { tsImport } from "tsx/esm/api";
import { CliError } from "./cliError.js";

type MetricsModule = typeof import("@ruststream/metrics");

export interface OperationsOptions {
  readonly app: RustStream;
  /** The service module's URL: `@ruststream/metrics` is looked up from there. */
  readonly moduleUrl: string;
  readonly port: number;
  readonly metrics: boolean;
  readonly log: Logger;
}

/**
 * The service's operations endpoints on one HTTP server on 127.0.0.1: health always, `/metrics` with
 * `metrics`. Called before the app starts, so the probes answer (not ready yet) while it connects
 * and the metrics count from the first message.
 */
export async function serveOperations(options: OperationsOptions): Promise<HttpServer> {
  let routes: HttpRoutes = health(options.app).routes;
  if (options.metrics) {
    const { prometheusMetrics } = await loadMetrics(options.moduleUrl);
    routes = { ...routes, ...prometheusMetrics(options.app).routes };
  }
  let server: HttpServer;
  try {
    server = await serveHttp({ port: options.port, routes });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new CliError(
      code === "EADDRINUSE"
        ? `--http-port ${options.port}: the port is in use; pick another (0 picks a free one)`
        : `--http-port ${options.port}: ${error instanceof Error ? error.message : String(error)}`,
      1,
      { cause: error },
    );
  }
  options.log.info({ url: server.url, paths: Object.keys(routes).join(",") }, "serving operations");
  return server;
}

/**
 * `@ruststream/metrics` as the service installed it, resolved from the service's module: the
 * service's copy (and its prom-client) is the one it may also use itself, and the CLI stays free of
 * prom-client for those who never ask for metrics.
 */
async function loadMetrics(moduleUrl: string): Promise<MetricsModule> {
  try {
    return (await tsImport("@ruststream/metrics", moduleUrl)) as MetricsModule;
  } catch (error) {
    // Only the package itself missing; a dependency of it that is missing is its own error.
    const missing =
      (error as { code?: unknown }).code === "ERR_MODULE_NOT_FOUND" &&
      String((error as Error).message).includes("'@ruststream/metrics'");
    if (missing) {
      throw new CliError(
        `--metrics needs @ruststream/metrics, which the service does not have: run \`npm install @ruststream/metrics\` in the service's folder (looked it up from ${new URL(moduleUrl).pathname})`,
        1,
        { cause: error },
      );
    }
    throw error;
  }
}
