// The rows by key, as main.ts and ../profileRow.ts (kafka) name them on the command line; and `runRow`, which
// runs one in a row's process of its own (../rows/rowChild.ts).
import { brokerAlone, fullApp } from "./packageRows.js";
import {
  defaultPull,
  fastestKafkajsKiB,
  type Row,
  rawKafkajs,
  rawRdkafka,
  type Trial,
} from "./rawRows.js";
import type { Drained } from "./tally.js";

export interface RowEntry {
  readonly name: string;
  readonly run: Row;
}

export const rowTable: Readonly<Record<string, RowEntry>> = {
  raw: { name: "raw librdkafka loop (auto store)", run: rawRdkafka(false) },
  "raw-stored": { name: "raw librdkafka loop (store per batch)", run: rawRdkafka(true) },
  "raw-256": {
    name: "raw librdkafka loop, consume(256), default back-off",
    run: rawRdkafka(false, defaultPull),
  },
  broker: { name: "broker alone, auto", run: brokerAlone("librdkafka", "auto") },
  "broker-tracked": { name: "broker alone, tracked", run: brokerAlone("librdkafka", "tracked") },
  app: { name: "full app, auto", run: fullApp("librdkafka", "auto") },
  "app-tracked": { name: "full app, tracked", run: fullApp("librdkafka", "tracked") },
  "raw-kafkajs": { name: "raw kafkajs loop (autoCommit)", run: rawKafkajs(fastestKafkajsKiB) },
  "raw-kafkajs-1024": {
    name: "raw kafkajs loop, kafkajs's 1 MiB per partition",
    run: rawKafkajs(1024),
  },
  "app-kafkajs": { name: "full app on kafkajs, auto", run: fullApp("kafkajs", "auto") },
  "app-kafkajs-tracked": {
    name: "full app on kafkajs, tracked",
    run: fullApp("kafkajs", "tracked"),
  },
};

export const defaultRows = [
  "raw",
  "raw-stored",
  "broker",
  "broker-tracked",
  "app",
  "app-tracked",
  "raw-kafkajs",
  "app-kafkajs",
];

/**
 * A row by key; besides the table's, the raw loops with other settings, for finding the fastest:
 * `raw:<consume max>:<fetch back-off ms or "default">` and `raw-kafkajs:<max KiB per partition>`.
 */
export function rowOf(key: string): RowEntry {
  const [base, ...settings] = key.split(":");
  if (base === "raw" && settings.length === 2) {
    const [max, backoff] = settings as [string, string];
    const pull = {
      consumeMax: Number(max),
      fetchBackoffMs: backoff === "default" ? undefined : Number(backoff),
    };
    return {
      name: `raw librdkafka loop, consume(${max}), back-off ${backoff}`,
      run: rawRdkafka(false, pull),
    };
  }
  if (base === "raw-kafkajs" && settings.length === 1) {
    return {
      name: `raw kafkajs loop, ${settings[0]} KiB per partition`,
      run: rawKafkajs(Number(settings[0])),
    };
  }
  const row = rowTable[key];
  if (row === undefined) {
    throw new Error(`unknown row "${key}": ${Object.keys(rowTable).join(", ")}`);
  }
  return row;
}

/** The row module's entry (../rows/protocol.ts): one run of the row `key` on a filled topic. */
export function runRow(key: string, trial: unknown): Promise<Drained> {
  return rowOf(key).run(trial as Trial);
}
