import {
  Histogram,
  type MetricObjectWithValues,
  type MetricValueWithName,
  type Registry,
} from "prom-client";
import { durationBuckets, type Tally } from "./tally.js";

type Values = MetricObjectWithValues<MetricValueWithName<"name">>;
type Value = MetricValueWithName<string>;

/**
 * `ruststream_consume_duration_seconds{name}`, exported from the tally's own buckets. prom-client's
 * `observe()` checks and hashes its labels on every call (about 1 µs), too much for the dispatch
 * path, and a histogram has no public way to be set from counts kept elsewhere; so this one answers
 * the registry's reads (`get()`, and `getForPromString()`, which prom-client's text format prefers
 * where a metric has it) from the tally.
 */
export class TalliedHistogram extends Histogram<"name"> {
  readonly #name: string;
  readonly #help: string;
  readonly #tally: Tally;

  constructor(name: string, help: string, tally: Tally, registry: Registry) {
    super({
      name,
      help,
      labelNames: ["name"],
      buckets: [...durationBuckets],
      registers: [registry],
    });
    this.#name = name;
    this.#help = help;
    this.#tally = tally;
  }

  override async get(): Promise<Values> {
    return this.#values();
  }

  async getForPromString(): Promise<Values> {
    return this.#values();
  }

  #values(): Values {
    const values: Value[] = [];
    const bucket = `${this.#name}_bucket`;
    for (const tally of this.#tally.subscribers.values()) {
      const name = tally.name;
      let cumulative = 0;
      for (let i = 0; i < durationBuckets.length; i++) {
        cumulative += tally.buckets[i]!;
        values.push({
          metricName: bucket,
          labels: { name, le: durationBuckets[i]! },
          value: cumulative,
        });
      }
      values.push(
        { metricName: bucket, labels: { name, le: "+Inf" }, value: tally.durationCount },
        { metricName: `${this.#name}_sum`, labels: { name }, value: tally.durationSum },
        { metricName: `${this.#name}_count`, labels: { name }, value: tally.durationCount },
      );
    }
    // The text format reads `type` as the word prom-client itself writes there.
    const type = "histogram" as unknown as Values["type"];
    return { name: this.#name, help: this.#help, type, values, aggregator: "sum" } as Values;
  }
}
