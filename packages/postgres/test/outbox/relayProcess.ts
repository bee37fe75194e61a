// A relay process for the outbox's crash tests: it relays one label's rows to Redis or Kafka and,
// once the broker confirmed its `killAfter`-th message, prints that message's outbox id and kills
// itself with SIGKILL, before marking the row sent: the step a relay can die at that leaves a
// message published but not marked (with the other messages of its claim in flight beside it).
import type { Publisher } from "@ruststream/core";
import { KafkaBroker } from "@ruststream/kafka";
import { RedisBroker } from "@ruststream/redis";
import { PostgresBroker } from "../../src/index.js";

const [url, table, label, target, targetUrl, leaseMs, killAfter] = process.argv.slice(2);
if (
  url === undefined ||
  table === undefined ||
  label === undefined ||
  (target !== "redis" && target !== "kafka") ||
  targetUrl === undefined ||
  leaseMs === undefined ||
  killAfter === undefined
) {
  throw new Error(
    "usage: relayProcess.ts <url> <table> <label> <redis|kafka> <targetUrl> <leaseMs> <killAfter>",
  );
}

async function publisherOf(): Promise<Publisher<never>> {
  const connected =
    target === "redis"
      ? await new RedisBroker({ url: targetUrl as string }).connect()
      : await new KafkaBroker({ brokers: targetUrl as string }).connect();
  return (await connected.defaultPublishPolicy().pair(connected)) as Publisher<never>;
}

const publisher = await publisherOf();
const outbox = await new PostgresBroker({ url, table }).connectOutbox();
let published = 0;
await outbox.relay({
  targets: { [label]: publisher },
  leaseMs: Number(leaseMs),
  afterPublish: (id) => {
    published++;
    if (published < Number(killAfter)) return;
    process.stdout.write(`published ${id}\n`);
    process.kill(process.pid, "SIGKILL");
  },
});
process.stdout.write("ready\n");
