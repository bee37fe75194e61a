// One in-process row alone, repeated, for a CPU profile of where its time goes (inProcess.ts mixes
// every row):
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --conditions=@ruststream/source --import tsx \
//     src/inProcessProfile.ts app reply 200000 6 cpu
//
// Rows: `app` or `bare`, then `ack` or `reply`. Then `node --import tsx
// src/redis/drain/profileSummary.ts /tmp/prof/<file>.cpuprofile` for self time by function.
import * as core from "@ruststream/core";
import { benchClock } from "./benchClock.js";
import { bareLoop, fullApp, orderPayloads } from "./inProcessApp.js";

const [which = "app", path = "reply", countArg = "200000", timesArg = "6", clockArg] =
  process.argv.slice(2);
if (which !== "app" && which !== "bare") throw new Error(`the row is app or bare, not ${which}`);
if (path !== "ack" && path !== "reply") throw new Error(`the path is ack or reply, not ${path}`);
const clock = benchClock(clockArg);
const payloads = orderPayloads(core, Number(countArg));
const reply = path === "reply";
const rates: number[] = [];
for (let i = 0; i < Number(timesArg); i++) {
  rates.push(
    which === "app"
      ? await fullApp(core, payloads, reply, undefined, clock.now)
      : await bareLoop(core, payloads, reply, clock.now),
  );
}
const k = (rate: number) => `${(rate / 1000).toFixed(0)}k`;
console.log(
  `${which}, ${path}, ${clock.name} time: ${rates.map(k).join(" ")} msg/s; best ${k(Math.max(...rates))}`,
);
