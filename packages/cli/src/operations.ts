import type { HttpRoutes, Logger, RustStream } from "@ruststream/core";
import { type HttpServer, health, serveHttp } from "@ruststream/health";
import { CliError } from "./cliError.js";
import { optionalPackage } from "./optionalPackage.js";

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
    const { prometheusMetrics } = await optionalPackage<MetricsModule>(
      "@ruststream/metrics",
      options.moduleUrl,
      "--metrics",
    );
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
