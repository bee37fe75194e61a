// One of our rows alone, repeated, for a CPU profile of where its time goes (main.ts mixes every
// row, and the Java worker's process besides):
//
//   eval "$(node ../brokers/src/cli.mjs env pulsar)"
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --conditions=@ruststream/source --import tsx \
//     src/pulsar/profileRow.ts produce-wire 200000 3
//
// Then `node src/redis/drain/profileSummary.ts /tmp/prof/<file>.cpuprofile` for self time by
// function and by package. Consume rows fill their topic first through the Java worker (untimed,
// in its own process, so the profile holds the consumer alone).
import { createTopic, deleteTopic, expectDrained } from "./admin.js";
import { JavaWorker } from "./javaWorker.js";
import { appConsume, type Measured, wireConsume, wireProduce } from "./rows.js";

const url = process.env.PULSAR_URL;
if (url === undefined)
  throw new Error(
    'set PULSAR_URL: eval "$(node ../brokers/src/cli.mjs env pulsar)" from tooling/bench',
  );
const rows: Record<string, (topic: string, count: number) => Promise<Measured>> = {
  "produce-wire": (topic, count) => wireProduce(url, topic, count, 10_000),
  "consume-wire": (topic, count) => wireConsume(url, topic, "bench", count, false),
  "consume-bare": (topic, count) => wireConsume(url, topic, "bench", count, true),
  app: (topic, count) => appConsume(url, topic, "bench", count),
};
const [rowArg = "produce-wire", countArg = "200000", timesArg = "3"] = process.argv.slice(2);
const row = rows[rowArg];
if (row === undefined) throw new Error(`unknown row "${rowArg}": ${Object.keys(rows).join(", ")}`);
const count = Number(countArg);
const java = await JavaWorker.start(url);
for (let i = 0; i < Number(timesArg); i++) {
  const topic = `bench-pulsar-profile-${process.pid}-${i}`;
  const consume = rowArg !== "produce-wire";
  await createTopic(topic, consume ? "bench" : undefined);
  if (consume) await java.produce(topic, count, 10_000);
  const measured = await row(topic, count);
  if (measured.messages !== count) throw new Error(`${measured.messages} of ${count}`);
  if (consume) await expectDrained(topic, "bench");
  console.log(
    `${rowArg}: ${((count / measured.ms) * 1000).toFixed(0)} orders/s, ${((measured.cpuMs * 1000) / count).toFixed(2)} µs CPU per order`,
  );
  await deleteTopic(topic);
}
java.stop();
