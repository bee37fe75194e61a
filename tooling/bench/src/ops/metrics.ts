// The rows that price @ruststream/metrics: loaded and left off, and on (prometheusMetrics on the
// app, counting every event). Scraping is no part of the dispatch path, so it is not timed.
import type { OpsRow } from "./row.js";

export const metricsRows: readonly OpsRow[] = [
  {
    name: "metrics loaded, off",
    async prepare() {
      await import("@ruststream/metrics");
      return () => {};
    },
  },
  {
    name: "metrics on",
    async prepare() {
      const { prometheusMetrics } = await import("@ruststream/metrics");
      return (app) => {
        prometheusMetrics(app);
      };
    },
  },
];
