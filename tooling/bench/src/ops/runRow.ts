// bench:ops's row module (../rows/protocol.ts), run in a row's process of its own (main.ts hands it
// to ../rows/rowProcess.ts without a warm-up input): load what the row needs, then on the ack path
// and on the reply path run the full app once untimed so the JIT has seen every path, and time it
// twice. Timed in the process's CPU time (user and system, GC threads included): the machine these
// run on is shared, and wall time there measures the neighbours as much as the row.
import * as core from "@ruststream/core";
import { fullApp, orderPayloads } from "../inProcessApp.js";
import { opsRows } from "./rows.js";

/** A row's messages per CPU second on each path. */
export interface OpsRates {
  readonly ack: number;
  readonly reply: number;
}

const cpuMs = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/** Runs the row `name` on `messages` orders per run (a number: the job's timed input). */
export async function runRow(name: string, messages: unknown): Promise<OpsRates> {
  const row = opsRows.find((r) => r.name === name);
  if (row === undefined) throw new Error(`no ops row named ${name}`);
  const payloads = orderPayloads(core, Number(messages));
  const configure = await row.prepare();
  const rates = { ack: 0, reply: 0 };
  // The better of two timed runs: a run the memory broker's retained messages cost a full
  // collection in says more about the collector's timing than about the row.
  for (const reply of [false, true]) {
    await fullApp(core, payloads, reply, configure, cpuMs);
    const first = await fullApp(core, payloads, reply, configure, cpuMs);
    const second = await fullApp(core, payloads, reply, configure, cpuMs);
    rates[reply ? "reply" : "ack"] = Math.max(first, second);
  }
  return rates;
}
