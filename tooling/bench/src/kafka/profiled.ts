// The Kafka bench's rows for ../profileRow.ts (any key rowTable.ts's rowOf takes): each run drains a
// fresh topic of 4 partitions the producer process filled, on the cluster KAFKA_BROKERS names (the
// producer process writes no profile).
import type { ProfiledBench } from "../profiled.js";
import { ProducerProcess } from "./producerProcess.js";
import { rowOf } from "./rowTable.js";

export const profiled: ProfiledBench = {
  row: [{ name: "row", default: "app" }],
  count: 200_000,
  times: 3,
  open: async ([rowArg = ""], count) => {
    const row = rowOf(rowArg);
    const brokers = process.env.KAFKA_BROKERS;
    if (brokers === undefined) throw new Error("set KAFKA_BROKERS (pnpm brokers env kafka)");
    const producer = await ProducerProcess.start(brokers);
    return {
      label: rowArg,
      run: async (i) => {
        const topic = `bench.kafka-profile.${process.pid}.${i}`;
        const group = `bench-kafka-profile-${process.pid}-${i}`;
        await producer.fill(topic, 4, count);
        const drained = await row.run({ brokers, topic, group, count });
        await producer.finish(topic, group);
        return drained;
      },
      close: () => producer.stop(),
    };
  },
};
