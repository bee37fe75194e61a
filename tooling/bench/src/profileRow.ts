// One row of a bench alone, repeated, for a CPU profile of where its time goes (each bench's main
// mixes every row):
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --conditions=@ruststream/source --import tsx \
//     src/profileRow.ts <bench> <row...> [count] [times] [extra]
//
// From this folder. Each bench's row arguments and defaults are in its profiled.ts; the usage line
// (`src/profileRow.ts <bench> --help`) prints them. The broker benches read their server from the
// environment (`REDIS_URL`, `KAFKA_BROKERS`, `PULSAR_URL`, `RABBITMQ_URL`: `pnpm brokers env <broker>` prints them;
// the publish bench starts tooling/brokers' when unset). Then
// `node --import tsx src/redis/drain/profileSummary.ts /tmp/prof/<file>.cpuprofile` for self time
// by function and by package.
import type { ProfiledBench } from "./profiled.js";

// Imported when asked for, so a Redis profile never loads librdkafka's addon.
const benches: Record<string, () => Promise<ProfiledBench>> = {
  "in-process": async () => (await import("./inProcessProfiled.js")).profiled,
  redis: async () => (await import("./redis/profiled.js")).profiled,
  "redis-drain": async () => (await import("./redis/drain/profiled.js")).profiled,
  kafka: async () => (await import("./kafka/profiled.js")).profiled,
  pulsar: async () => (await import("./pulsar/profiled.js")).profiled,
  publish: async () => (await import("./publish/profiled.js")).profiled,
  rabbitmq: async () => (await import("./rabbitmq/profiled.js")).profiled,
};

const [benchArg, ...args] = process.argv.slice(2);
const load = benchArg === undefined ? undefined : benches[benchArg];
if (load === undefined) {
  throw new Error(
    `name the bench first: src/profileRow.ts <${Object.keys(benches).join("|")}> <row...> [count] [times]`,
  );
}
const bench = await load();
const usage = () =>
  `src/profileRow.ts ${benchArg} ${bench.row.map((r) => `[${r.name}: ${r.default}]`).join(" ")} [count: ${bench.count}] [times: ${bench.times}]${bench.extra === undefined ? "" : ` [${bench.extra.name}: ${bench.extra.default}]`}`;
if (args[0] === "--help") {
  console.log(usage());
  process.exit(0);
}
const at = (i: number, fallback: string) => args[i] ?? fallback;
const row = bench.row.map((r, i) => at(i, r.default));
const count = Number(at(row.length, String(bench.count)));
const times = Number(at(row.length + 1, String(bench.times)));
const extra = at(row.length + 2, bench.extra?.default ?? "");
if (!Number.isInteger(count) || count <= 0 || !Number.isInteger(times) || times <= 0) {
  throw new Error(`count and times are whole numbers above 0: ${usage()}`);
}

const opened = await bench.open(row, count, extra);
const rates: number[] = [];
try {
  for (let i = 0; i < times; i++) {
    const { ms, cpuMs } = await opened.run(i);
    const rate = (count / ms) * 1000;
    rates.push(rate);
    const cpu =
      cpuMs === undefined ? "" : `, ${((cpuMs * 1000) / count).toFixed(2)} µs CPU per message`;
    console.log(`${opened.label}: ${rate.toFixed(0)} msg/s${cpu}`);
  }
} finally {
  await opened.close();
}
console.log(`${opened.label}: best of ${times}, ${Math.max(...rates).toFixed(0)} msg/s`);
