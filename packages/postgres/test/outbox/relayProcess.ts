// A relay process for the outbox's crash test: it relays one label's rows to Redis and, once Redis
// confirmed the first message, prints its outbox id and kills itself with SIGKILL, before marking
// the row sent: the step a relay can die at that leaves a message published but not marked.
import { RedisBroker } from "@ruststream/redis";
import { PostgresBroker } from "../../src/index.js";

const [url, table, label, redisUrl, leaseMs] = process.argv.slice(2);
if (
  url === undefined ||
  table === undefined ||
  label === undefined ||
  redisUrl === undefined ||
  leaseMs === undefined
) {
  throw new Error("usage: outboxRelay.ts <url> <table> <label> <redisUrl> <leaseMs>");
}

const redis = await new RedisBroker({ url: redisUrl }).connect();
const publisher = await redis.defaultPublishPolicy().pair(redis);
const outbox = await new PostgresBroker({ url, table }).connectOutbox();
await outbox.relay({
  targets: { [label]: publisher },
  leaseMs: Number(leaseMs),
  afterPublish: (id) => {
    process.stdout.write(`published ${id}\n`);
    process.kill(process.pid, "SIGKILL");
  },
});
process.stdout.write("ready\n");
