// One row alone, repeated, for a CPU profile of where its time goes (main.ts mixes every row):
//
//   REDIS_URL=redis://127.0.0.1:16379 node --cpu-prof --cpu-prof-dir=/tmp/prof \
//     --conditions=@ruststream/source --import tsx src/redis/profileRow.ts stream "full app" 200000 3
import { GeneratorProcess } from "./generatorProcess.js";
import { isModeName, modes, publishWindow, type VariantName, variantNames } from "./modes.js";
import { openRaw, serverTarget } from "./target.js";
import type { Trial } from "./trial.js";

const [modeArg = "stream", variantArg = "full app", countArg = "200000", timesArg = "3"] =
  process.argv.slice(2);
if (!isModeName(modeArg)) throw new Error(`unknown mode "${modeArg}": stream, list or pubsub`);
if (!variantNames.includes(variantArg as VariantName)) {
  throw new Error(`unknown row "${variantArg}": ${variantNames.join(", ")}`);
}
const url = process.env.REDIS_URL;
if (url === undefined) throw new Error("set REDIS_URL (pnpm brokers env redis prints it)");
const mode = modes[modeArg];
const count = Number(countArg);
const target = serverTarget(url);
const generator = await GeneratorProcess.start(target);
const admin = await openRaw(target, "admin");
for (let i = 0; i < Number(timesArg); i++) {
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
  console.log(`${modeArg} / ${variantArg}: ${((count / measured.ms) * 1000).toFixed(0)} msg/s`);
  await admin.del(key, `${key}.processing`, `${key}.delayed`, `${key}.recovery`);
}
generator.stop();
admin.disconnect();
