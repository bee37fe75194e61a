// One publish row alone, repeated, for a CPU profile of where its time goes (main.ts mixes rows):
//
//   REDIS_URL=redis://127.0.0.1:16379 node --cpu-prof --cpu-prof-dir=/tmp/prof \
//     --conditions=@ruststream/source --import tsx src/publish/profileRow.ts redis app.publish 200000 3
//
// The broker and row names are main.ts's (`redis`, `kafka-rdkafka`, ...; a row's printed name).
import { rowsOf } from "./brokers.js";

const [brokerArg = "redis", rowArg = "app.publish", countArg = "200000", timesArg = "3", depthArg] =
  process.argv.slice(2);
const rows = await rowsOf(brokerArg);
const row = rows.find((r) => r.name === rowArg);
if (row === undefined) {
  throw new Error(`no row "${rowArg}" on ${brokerArg}: ${rows.map((r) => r.name).join(", ")}`);
}
const count = Number(countArg);
const depth = Number(depthArg ?? 500);
for (let i = 0; i < Number(timesArg); i++) {
  const { ms, cpuMs } = await row.run(count, depth);
  console.log(
    `${brokerArg} / ${row.name}: ${((count / ms) * 1000).toFixed(0)} msg/s, ${((cpuMs * 1000) / count).toFixed(2)} µs CPU per message`,
  );
}
