// One Kafka row alone, repeated, for a CPU profile of where its time goes (main.ts mixes every row):
//
//   KAFKA_BROKERS=127.0.0.1:19092 node --cpu-prof --cpu-prof-dir=/tmp/prof \
//     --conditions=@ruststream/source --import tsx src/kafka/profileRow.ts app 200000 3
//
// Then `node --import tsx src/redis/drain/profileSummary.ts /tmp/prof/<file>.cpuprofile` for self
// time by function and by package (the producer process writes no profile).
import { ProducerProcess } from "./producerProcess.js";
import { rowOf } from "./rowTable.js";

const [rowArg = "app", countArg = "200000", timesArg = "3"] = process.argv.slice(2);
const row = rowOf(rowArg);
const brokers = process.env.KAFKA_BROKERS;
if (brokers === undefined) throw new Error("set KAFKA_BROKERS (pnpm brokers env kafka)");
const count = Number(countArg);
const producer = await ProducerProcess.start(brokers);
for (let i = 0; i < Number(timesArg); i++) {
  const topic = `bench.kafka-profile.${process.pid}.${i}`;
  const group = `bench-kafka-profile-${process.pid}-${i}`;
  await producer.fill(topic, 4, count);
  const drained = await row.run({ brokers, topic, group, count });
  console.log(
    `${rowArg}: ${((count / drained.ms) * 1000).toFixed(0)} orders/s, ${((drained.cpuMs * 1000) / count).toFixed(2)} µs CPU per order`,
  );
  await producer.finish(topic, group);
}
producer.stop();
