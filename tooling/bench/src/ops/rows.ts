import { metricsRows } from "./metrics.js";
import { bareRow, type OpsRow } from "./row.js";
import { tracingRows } from "./tracing.js";

/** Every row of `bench:ops`, the bare one first: each operations package adds its own file here. */
export const opsRows: readonly OpsRow[] = [bareRow, ...metricsRows, ...tracingRows];
