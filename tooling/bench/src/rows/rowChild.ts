// One row in one round, in a process of its own (forked by rowProcess.ts), so its peak resident
// memory is the row's alone and no row inherits another's heap, JIT state or a client's native
// queues: an untimed warm-up run (unless the job has none), then the timed run with the memory
// sampled; answers what the row measured and the memory over IPC (protocol.ts) and exits.
//
//   forked with a RowJob as JSON for its only argument.
import { MemorySampler } from "./memorySampler.js";
import type { RowJob, RowModule, RowReply } from "./protocol.js";

const reply = (message: RowReply) =>
  new Promise<void>((resolve) => {
    if (process.send === undefined) resolve();
    else process.send(message, () => resolve());
  });

try {
  const job = JSON.parse(process.argv[2] ?? "") as RowJob;
  const rows = (await import(job.module)) as RowModule;
  if (job.warm !== undefined) await rows.runRow(job.key, job.warm);
  const sampler = new MemorySampler();
  const measured = await rows.runRow(job.key, job.timed);
  const sampled = sampler.stop();
  await reply({
    kind: "ran",
    measured,
    memory: { maxRssKiB: process.resourceUsage().maxRSS, sampled },
  });
} catch (error) {
  await reply({
    kind: "failed",
    message: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  process.exitCode = 1;
}
// A client's handles (a timer, a socket not quite closed) must not keep a finished row alive.
process.exit();
