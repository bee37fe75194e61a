// The RabbitMQ drain's rows for ../profileRow.ts: each run fills a fresh queue of the row's type (untimed, in a
// process of its own, so the profile holds the drain alone), drains it with the row, and checks it
// empty. The node is the one RABBITMQ_URL names:
// `eval "$(node ../brokers/src/cli.mjs env rabbitmq)"` from this folder.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import amqp from "amqplib";
import type { ProfiledBench } from "../profiled.js";
import { expectDrained, queueOfKey } from "./queues.js";
import { rabbitRows } from "./rows.js";

export const profiled: ProfiledBench = {
  row: [
    {
      name: "raw|app|app-default|raw-multiple|cloudamqp|cloudamqp-multiple|raw:<prefetch>|app:<prefetch>, each [@classic]",
      default: "app",
    },
  ],
  count: 100_000,
  times: 3,
  open: async ([rowArg = "app"], count) => {
    const url = process.env.RABBITMQ_URL;
    if (url === undefined) {
      throw new Error(
        'set RABBITMQ_URL: eval "$(node ../brokers/src/cli.mjs env rabbitmq)" from tooling/bench',
      );
    }
    const label = rabbitRows.name(rowArg);
    const { type } = queueOfKey(rowArg);
    const connection = await amqp.connect(url);
    const confirms = await connection.createConfirmChannel();
    return {
      label,
      run: async (i) => {
        const queue = `bench.rabbitmq.profile.${process.pid}.${i}`;
        execFileSync(
          process.execPath,
          ["--import", "tsx", fileURLToPath(new URL("./fillProcess.ts", import.meta.url))].concat([
            url,
            queue,
            String(count),
            type,
          ]),
          { stdio: "inherit" },
        );
        const drained = await rabbitRows.runRow(rowArg, { url, queue, count, type });
        if (drained.messages !== count) throw new Error(`${drained.messages} of ${count}`);
        await expectDrained(confirms, queue, label);
        return drained;
      },
      close: () => connection.close(),
    };
  },
};
