import type { Prometheus } from "./prometheus.js";

/**
 * One series family as Prometheus holds it: each sample keyed by the values of `by`, joined with a
 * space (`"orders ack"`), so a test compares it with the counts it expects in one `toEqual`.
 */
export async function read(
  prometheus: Prometheus,
  promql: string,
  by: readonly string[],
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const sample of await prometheus.query(promql)) {
    out[by.map((label) => sample.labels[label]).join(" ")] = sample.value;
  }
  return out;
}
