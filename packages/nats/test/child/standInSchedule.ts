// A process running the in-process stand-in on a real clock with a repeating schedule
// (`everyMs`), for test/standInSchedules.test.ts: it waits for the first delivery, then either
// shuts its connection down ("close") or leaves it open ("open"), and ends its script. It exits by
// itself only if the schedule's timer holds nothing.
import { HeaderMap, systemClock } from "@ruststream/core";
import { noCoordinator } from "@ruststream/core/broker";
import { NatsBroker, NatsPublish } from "../../src/index.js";

const mode = process.argv[2];
if (mode !== "close" && mode !== "open") throw new Error(`mode "close" or "open", not ${mode}`);

const connected = await new NatsBroker({
  servers: "nats://in-process.invalid:4222",
}).connectInProcess({ coordinator: noCoordinator, clock: systemClock });
await connected.link.ensureStream("ticks", ["ticks.>"], {
  subjects: ["ticks.>"],
  storage: "memory",
  messageSchedules: true,
});
const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
await publisher.publish({
  name: "ticks.schedule",
  payload: new Uint8Array([1]),
  headers: new HeaderMap(),
  options: { schedule: { everyMs: 1000, target: "ticks.due" } },
});
// The first delivery, read as it lands: the timer runs.
while ((await connected.link.message("ticks", { lastOn: "ticks.due" })) === undefined)
  await new Promise((resolve) => setTimeout(resolve, 50));
if (mode === "close") await connected.shutdown();
process.stdout.write(`delivered, ${mode}\n`);
