// @ruststream/otel: OpenTelemetry tracing for a RustStream app, as middleware.
export type { TracingOptions } from "./tracing.js";
export { tracing } from "./tracing.js";
