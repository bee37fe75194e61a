// One Kafka row in one round, in a process of its own (forked by rowProcess.ts), so its peak
// resident memory is the row's alone and no row inherits another's heap or librdkafka's queues:
// an untimed warm-up drain (the JIT sees every path), then the timed drain; answers the rate's
// figures and the memory peaks over IPC (protocol.ts) and exits.
//
//   forked with a RowJob as JSON for its only argument.
import { MemorySampler } from "./memorySampler.js";
import type { RowJob, RowReply } from "./protocol.js";
import { rowOf } from "./rowTable.js";

const reply = (message: RowReply) =>
  new Promise<void>((resolve) => {
    if (process.send === undefined) resolve();
    else process.send(message, () => resolve());
  });

try {
  const job = JSON.parse(process.argv[2] ?? "") as RowJob;
  const row = rowOf(job.key);
  await row.run({ brokers: job.brokers, ...job.warm });
  const sampler = new MemorySampler();
  const drained = await row.run({ brokers: job.brokers, ...job.timed });
  const sampled = sampler.stop();
  await reply({
    kind: "drained",
    ms: drained.ms,
    messages: drained.messages,
    idSum: drained.idSum.toString(),
    cpuMs: drained.cpuMs,
    maxRssKiB: process.resourceUsage().maxRSS,
    sampled,
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
