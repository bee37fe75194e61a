import {
  Histogram,
  type MetricObjectWithValues,
  type MetricValueWithName,
  type Registry,
} from "prom-client";
import type { Buckets } from "./buckets.js";
import type { SubscriberTally, Tally } from "./tally.js";

type Values = MetricObjectWithValues<MetricValueWithName<"name">>;
type Value = MetricValueWithName<string>;

/** What a tallied histogram shows: its name and help, its bounds, and each subscriber's counts. */
export interface TalliedSeries {
  readonly name: string;
  readonly help: string;
  readonly bounds: readonly number[];
  /** The subscriber's counts, or `undefined` for no sample. */
  readonly of: (tally: SubscriberTally) => Buckets | undefined;
}

/**
 * A per-subscriber histogram (`name` label) exported from the tally's own buckets. prom-client's
 * `observe()` checks and hashes its labels on every call (about 1 µs), too much for the dispatch
 * path, and a histogram has no public way to be set from counts kept elsewhere; so this one answers
 * the registry's reads (`get()`, and `getForPromString()`, which prom-client's text format prefers
 * where a metric has it) from the tally.
 */
export class TalliedHistogram extends Histogram<"name"> {
  readonly #series: TalliedSeries;
  readonly #tally: Tally;

  constructor(series: TalliedSeries, tally: Tally, registry: Registry) {
    super({
      name: series.name,
      help: series.help,
      labelNames: ["name"],
      buckets: [...series.bounds],
      registers: [registry],
    });
    this.#series = series;
    this.#tally = tally;
  }

  override async get(): Promise<Values> {
    return this.#values();
  }

  async getForPromString(): Promise<Values> {
    return this.#values();
  }

  #values(): Values {
    const { name: metric, help, bounds, of } = this.#series;
    const values: Value[] = [];
    const bucket = `${metric}_bucket`;
    for (const tally of this.#tally.subscribers.values()) {
      const counts = of(tally);
      if (counts === undefined) continue;
      const name = tally.name;
      let cumulative = 0;
      for (let i = 0; i < bounds.length; i++) {
        cumulative += counts.counts[i]!;
        values.push({ metricName: bucket, labels: { name, le: bounds[i]! }, value: cumulative });
      }
      values.push(
        { metricName: bucket, labels: { name, le: "+Inf" }, value: counts.count },
        { metricName: `${metric}_sum`, labels: { name }, value: counts.sum },
        { metricName: `${metric}_count`, labels: { name }, value: counts.count },
      );
    }
    // The text format reads `type` as the word prom-client itself writes there.
    const type = "histogram" as unknown as Values["type"];
    return { name: metric, help, type, values, aggregator: "sum" } as Values;
  }
}
