// The Redis bench's rows for ../profileRow.ts: a transport (stream, list, Pub/Sub) and a variant
// (raw ioredis, broker alone, full app), on the server REDIS_URL names (`pnpm brokers env redis`
// prints it), each run on a fresh key filled (or published under credit) by the generator process.
import type { ProfiledBench } from "../profiled.js";
import { GeneratorProcess } from "./generatorProcess.js";
import { isModeName, modes, publishWindow, type VariantName, variantNames } from "./modes.js";
import { openRaw, serverTarget } from "./target.js";
import type { Trial } from "./trial.js";

export const profiled: ProfiledBench = {
  row: [
    { name: "stream|list|pubsub", default: "stream" },
    { name: "variant", default: "full app" },
  ],
  count: 200_000,
  times: 3,
  open: async ([modeArg = "", variantArg = ""], count) => {
    if (!isModeName(modeArg)) throw new Error(`unknown mode "${modeArg}": stream, list or pubsub`);
    if (!variantNames.includes(variantArg as VariantName)) {
      throw new Error(`unknown row "${variantArg}": ${variantNames.join(", ")}`);
    }
    const url = process.env.REDIS_URL;
    if (url === undefined) throw new Error("set REDIS_URL (pnpm brokers env redis prints it)");
    const mode = modes[modeArg];
    const target = serverTarget(url);
    const generator = await GeneratorProcess.start(target);
    const admin = await openRaw(target, "admin");
    return {
      label: `${modeArg} / ${variantArg}`,
      run: async (i) => {
        const key = `bench:profile:${process.pid}:${i}`;
        await mode.fill?.(generator, key, count);
        const trial: Trial = {
          target,
          key,
          group: "bench",
          count,
          ...(mode.fill === undefined
            ? {
                publish: () =>
                  generator.run({ kind: "publish", channel: key, count, window: publishWindow }),
                progress: (received: number) => generator.credit(received),
              }
            : {}),
        };
        const measured = await mode.consumers[variantArg as VariantName](trial);
        await admin.del(key, `${key}.processing`, `${key}.delayed`, `${key}.recovery`);
        return { ms: measured.ms };
      },
      close: () => {
        generator.stop();
        admin.disconnect();
      },
    };
  },
};
