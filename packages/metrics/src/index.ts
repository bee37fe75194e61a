// @ruststream/metrics: Prometheus metrics of a RustStream app, on prom-client.
export type { Metrics, MetricsOptions } from "./prometheusMetrics.js";
export { prometheusMetrics } from "./prometheusMetrics.js";
export { metricNames } from "./series.js";
export { durationBuckets, waitBuckets } from "./tally.js";
