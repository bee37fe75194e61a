// Which row each Kafka row is held against, and issue 26's target where it sets one: the full app
// reaches at least 0.9 of the fastest raw loop of its engine, on both engines, under `auto` and
// `tracked`. The broker-alone rows are reported only. main.ts prints these at the medians of one
// run, pooled.ts round by round over several.

/** A row, the row it is held against, and the least ratio of their rates the target allows. */
export type RatioPair = readonly [row: string, against: string, target: number | undefined];

export const ratioPairs: readonly RatioPair[] = [
  ["app", "raw", 0.9],
  ["app-tracked", "raw", 0.9],
  ["app-tracked", "raw-stored", 0.9],
  ["broker", "raw", undefined],
  ["broker-tracked", "raw", undefined],
  ["app-kafkajs", "raw-kafkajs", 0.9],
  ["app-kafkajs-tracked", "raw-kafkajs", 0.9],
];
