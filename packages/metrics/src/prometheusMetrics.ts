import type { HttpRoutes, RustStream } from "@ruststream/core";
import { RustStreamError } from "@ruststream/core";
import { Registry } from "prom-client";
import { BacklogReading } from "./backlogReading.js";
import { metricNames, registerSeries } from "./series.js";
import { Tally } from "./tally.js";

export interface MetricsOptions {
  /**
   * Where the series are registered (default: a registry of their own). Pass prom-client's global
   * `register`, or one holding your own metrics, to serve them all from one endpoint.
   */
  readonly registry?: Registry;
  /**
   * How long a scrape waits for a broker's answer to a subscriber's backlog (default 1000 ms):
   * past it that subscriber has no backlog sample in the scrape, counted in
   * `ruststream_backlog_failures_total`, and the scrape goes on.
   */
  readonly backlogTimeoutMs?: number;
}

const defaultBacklogTimeoutMs = 1000;

/** An app's Prometheus metrics. */
export interface Metrics {
  readonly registry: Registry;
  /** The registry in Prometheus's text format, as a scrape reads it. */
  text(): Promise<string>;
  /** `/metrics`, for `serveHttp` from `@ruststream/health` (or any server that takes routes). */
  readonly routes: HttpRoutes;
}

/**
 * Counts what `app` does from its runtime events, for every later `app.start()`, and registers the
 * series on the registry. The counting costs a few additions per message; prom-client does its work
 * only when scraped.
 */
export function prometheusMetrics(app: RustStream, options: MetricsOptions = {}): Metrics {
  const registry = options.registry ?? new Registry();
  const taken = Object.values(metricNames).find((name) => registry.getSingleMetric(name));
  if (taken !== undefined) {
    throw new RustStreamError(
      "invalid-argument",
      `the registry already holds ${taken}: call prometheusMetrics() once per registry (one app per registry), or give this app a registry of its own`,
    );
  }
  const timeoutMs = options.backlogTimeoutMs ?? defaultBacklogTimeoutMs;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new RustStreamError(
      "invalid-argument",
      `prometheusMetrics(app, { backlogTimeoutMs: ${timeoutMs} }): give a number of milliseconds above 0 (default ${defaultBacklogTimeoutMs}), under the scrape's own timeout`,
    );
  }
  const tally = new Tally();
  registerSeries(registry, tally, new BacklogReading(tally, timeoutMs));
  app.observe(tally.observe);
  const text = () => registry.metrics();
  return {
    registry,
    text,
    routes: {
      "/metrics": async () => ({
        status: 200,
        contentType: registry.contentType,
        body: await text(),
      }),
    },
  };
}
