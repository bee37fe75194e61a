// The Redis drain's rows for ../../profileRow.ts (our rows only; the Rust consumer is a program of
// its own): each run drains a fresh stream of orders the generator process filled, on the server
// REDIS_URL names.
import * as redis from "@ruststream/redis";
import type { ProfiledBench } from "../../profiled.js";
import { GeneratorProcess } from "../generatorProcess.js";
import { openRaw, serverTarget } from "../target.js";
import { appDrain, brokerDrain, type DrainRow, rawDrain } from "./rows.js";

const rows: Record<string, DrainRow> = {
  app: appDrain(redis, false),
  "app-schema": appDrain(redis, true),
  broker: brokerDrain(redis),
  raw: rawDrain,
};

export const profiled: ProfiledBench = {
  row: [{ name: Object.keys(rows).join("|"), default: "app" }],
  count: 300_000,
  times: 3,
  open: async ([rowArg = ""], count) => {
    const row = rows[rowArg];
    if (row === undefined) {
      throw new Error(`unknown row "${rowArg}": ${Object.keys(rows).join(", ")}`);
    }
    const url = process.env.REDIS_URL;
    if (url === undefined) throw new Error("set REDIS_URL (pnpm brokers env redis prints it)");
    const generator = await GeneratorProcess.start(serverTarget(url));
    const admin = await openRaw(serverTarget(url), "admin");
    return {
      label: rowArg,
      run: async (i) => {
        const key = `bench:drain-profile:${process.pid}:${i}`;
        await generator.run({ kind: "fill-stream-orders", key, count });
        await admin.xgroup("CREATE", key, "bench", "0");
        const drained = await row({ url, key, group: "bench", count });
        await admin.unlink(key);
        return drained;
      },
      close: () => {
        generator.stop();
        admin.disconnect();
      },
    };
  },
};
