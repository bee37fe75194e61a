// One ops row alone, repeated, for a CPU profile of where its time goes (main.ts mixes every row):
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --conditions=@ruststream/source --import tsx \
//     src/ops/profileRow.ts "tracing on" ack 200000 6
//
// Then `node --import tsx src/redis/drain/profileSummary.ts /tmp/prof/<file>.cpuprofile`.
import * as core from "@ruststream/core";
import { fullApp, orderPayloads } from "../inProcessApp.js";
import { opsRows } from "./rows.js";

const [name = "tracing on", path = "ack", countArg = "200000", timesArg = "6"] =
  process.argv.slice(2);
const row = opsRows.find((r) => r.name === name);
if (row === undefined)
  throw new Error(`no ops row named ${name}: ${opsRows.map((r) => r.name).join(", ")}`);
const payloads = orderPayloads(core, Number(countArg));
const configure = await row.prepare();
const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};
const rates: number[] = [];
for (let i = 0; i < Number(timesArg); i++) {
  rates.push(await fullApp(core, payloads, path === "reply", configure, cpuMs));
}
console.log(
  `${name}, ${path}: ${rates.map((r) => `${(r / 1000).toFixed(0)}k`).join(" ")} msg per CPU s`,
);
