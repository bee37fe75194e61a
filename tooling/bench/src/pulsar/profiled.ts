// The Pulsar bench's rows for ../profileRow.ts (ours only; the Java client's are the worker's):
// consume rows fill their fresh topic through the Java worker first (untimed, in its own process,
// so the profile holds the consumer alone). The broker is the one PULSAR_URL names:
// `eval "$(node ../brokers/src/cli.mjs env pulsar)"` from this folder.
import type { ProfiledBench } from "../profiled.js";
import { createTopic, deleteTopic, expectDrained } from "./admin.js";
import { JavaWorker } from "./javaWorker.js";
import { appConsume, type Measured, wireConsume, wireProduce } from "./rows.js";

type Row = (url: string, topic: string, count: number) => Promise<Measured>;

const rows: Record<string, Row> = {
  "produce-wire": (url, topic, count) => wireProduce(url, topic, count, 10_000),
  "consume-wire": (url, topic, count) => wireConsume(url, topic, "bench", count, false),
  "consume-bare": (url, topic, count) => wireConsume(url, topic, "bench", count, true),
  app: (url, topic, count) => appConsume(url, topic, "bench", count),
};

export const profiled: ProfiledBench = {
  row: [{ name: Object.keys(rows).join("|"), default: "produce-wire" }],
  count: 200_000,
  times: 3,
  open: async ([rowArg = ""], count) => {
    const row = rows[rowArg];
    if (row === undefined) {
      throw new Error(`unknown row "${rowArg}": ${Object.keys(rows).join(", ")}`);
    }
    const url = process.env.PULSAR_URL;
    if (url === undefined) {
      throw new Error(
        'set PULSAR_URL: eval "$(node ../brokers/src/cli.mjs env pulsar)" from tooling/bench',
      );
    }
    const consume = rowArg !== "produce-wire";
    const java = await JavaWorker.start(url);
    return {
      label: rowArg,
      run: async (i) => {
        const topic = `bench-pulsar-profile-${process.pid}-${i}`;
        await createTopic(topic, consume ? "bench" : undefined);
        if (consume) await java.produce(topic, count, 10_000);
        const measured = await row(url, topic, count);
        if (measured.messages !== count) throw new Error(`${measured.messages} of ${count}`);
        if (consume) await expectDrained(topic, "bench");
        await deleteTopic(topic);
        return measured;
      },
      close: () => java.stop(),
    };
  },
};
