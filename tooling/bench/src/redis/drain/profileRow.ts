// One drain row alone, repeated, for a CPU profile of where its time goes (main.ts mixes every row):
//
//   REDIS_URL=redis://127.0.0.1:16399 node --cpu-prof --cpu-prof-dir=/tmp/prof \
//     --conditions=@ruststream/source --import tsx src/redis/drain/profileRow.ts app 300000 3
//
// Then `node src/redis/drain/profileSummary.ts /tmp/prof/<file>.cpuprofile` for self time by
// function and by package.
import * as redis from "@ruststream/redis";
import { GeneratorProcess } from "../generatorProcess.js";
import { openRaw, serverTarget } from "../target.js";
import { appDrain, brokerDrain, type DrainRow, rawDrain } from "./rows.js";

const rows: Record<string, DrainRow> = {
  app: appDrain(redis, false),
  "app-schema": appDrain(redis, true),
  broker: brokerDrain(redis),
  raw: rawDrain,
};
const [rowArg = "app", countArg = "300000", timesArg = "3"] = process.argv.slice(2);
const row = rows[rowArg];
if (row === undefined) throw new Error(`unknown row "${rowArg}": ${Object.keys(rows).join(", ")}`);
const url = process.env.REDIS_URL;
if (url === undefined) throw new Error("set REDIS_URL");
const count = Number(countArg);
const generator = await GeneratorProcess.start(serverTarget(url));
const admin = await openRaw(serverTarget(url), "admin");
for (let i = 0; i < Number(timesArg); i++) {
  const key = `bench:drain-profile:${process.pid}:${i}`;
  await generator.run({ kind: "fill-stream-orders", key, count });
  await admin.xgroup("CREATE", key, "bench", "0");
  const drained = await row({ url, key, group: "bench", count });
  console.log(
    `${rowArg}: ${((count / drained.ms) * 1000).toFixed(0)} orders/s, ${((drained.cpuMs * 1000) / count).toFixed(2)} µs CPU per order`,
  );
  await admin.unlink(key);
}
generator.stop();
admin.disconnect();
