// A classic queue or a stream queue on the one RabbitMQ node of tooling/brokers, declared by the
// services and reached by them through the fault proxy, the load published straight to the node:
// the quorum queue's target (rabbitmqTarget.ts), with the stream's offset file removed at the end.
import { rm } from "node:fs/promises";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { streamOffsetFile } from "../service/rabbitmqStream.js";
import { rabbitmqTarget } from "./rabbitmqTarget.js";
import type { Target } from "./target.js";

export async function rabbitmqQueueTarget(
  key: string,
  broker: "rabbitmq-classic" | "rabbitmq-stream",
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  log: (line: string) => void,
): Promise<Target> {
  const target = await rabbitmqTarget(key, proxy, false, log);
  if (broker === "rabbitmq-classic") return target;
  return {
    ...target,
    async cleanup() {
      await target.cleanup();
      await rm(streamOffsetFile(key), { force: true });
    },
  };
}
