// One row in a process of its own (forked by main.ts): load what the row needs, run the full app
// once untimed so the JIT has seen every path, then time it twice; the ack path and the reply path. Timed
// in the process's CPU time (user and system, GC threads included): the machine these run on is
// shared, and wall time there measures the neighbours as much as the row.
import * as core from "@ruststream/core";
import { fullApp, orderPayloads } from "../inProcessApp.js";
import { opsRows } from "./rows.js";

const [name, count] = process.argv.slice(2);
const row = opsRows.find((r) => r.name === name);
if (row === undefined) throw new Error(`no ops row named ${name}`);
const payloads = orderPayloads(core, Number(count));
const configure = await row.prepare();
const rates: { ack: number; reply: number } = { ack: 0, reply: 0 };
const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};
// The better of two timed runs: a run the memory broker's retained messages cost a full collection
// in says more about the collector's timing than about the row.
for (const reply of [false, true]) {
  await fullApp(core, payloads, reply, configure, cpuMs);
  const first = await fullApp(core, payloads, reply, configure, cpuMs);
  const second = await fullApp(core, payloads, reply, configure, cpuMs);
  rates[reply ? "reply" : "ack"] = Math.max(first, second);
}
process.send?.(rates);
