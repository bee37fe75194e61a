// A process running the in-process stand-in on a real clock with a message whose own TTL is an
// hour, for test/standInTimers.test.ts: it stores the message, then either shuts its connection
// down ("close") or leaves it open ("open"), and ends its script. It exits by itself only if the
// TTL's timer holds nothing.
import { systemClock } from "@ruststream/core";
import { noCoordinator } from "@ruststream/core/broker";
import { NatsBroker, NatsPublish } from "../../src/index.js";

const mode = process.argv[2];
if (mode !== "close" && mode !== "open") throw new Error(`mode "close" or "open", not ${mode}`);

const connected = await new NatsBroker({
  servers: "nats://in-process.invalid:4222",
}).connectInProcess({ coordinator: noCoordinator, clock: systemClock });
await connected.link.ensureStream("kept", ["kept.>"], {
  subjects: ["kept.>"],
  storage: "memory",
  messageTtl: true,
});
const publisher = await new NatsPublish({ jetStream: true }).pair(connected);
await publisher.publish({
  name: "kept.one",
  payload: new Uint8Array([1]),
  options: { ttlMs: 3_600_000 },
});
const held = await connected.link.message("kept", { lastOn: "kept.one" });
if (held === undefined) throw new Error("the message with a TTL was not stored");
if (mode === "close") await connected.shutdown();
process.stdout.write(`stored, ${mode}\n`);
