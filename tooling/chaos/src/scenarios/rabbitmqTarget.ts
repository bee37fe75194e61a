// A quorum queue on the RabbitMQ node of tooling/brokers, declared by the services (with the cap
// and dead letter of a retry plan), which connect through the fault proxy; the load is published
// straight to the node through the default exchange. The node is shared: no scenario restarts it.
import { RabbitBroker, RabbitPublish } from "@ruststream/rabbitmq";
import { brokers, ensureBrokers, requireEnv } from "@ruststream/tooling-testkit";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { publishLoad } from "../load.js";
import type { Target } from "./target.js";

export async function rabbitmqTarget(
  key: string,
  /** The queues the services declare beside the main one: its dead letter, its wait queues. */
  besides: readonly string[],
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  log: (line: string) => void,
): Promise<Target> {
  await ensureBrokers(["rabbitmq"], log);
  const direct = requireEnv("RABBITMQ_URL");
  const url = new URL(direct);
  if (proxy !== undefined) {
    const port = await proxy.toxiproxy.proxy(proxy.name, `${url.hostname}:${url.port}`);
    url.hostname = "127.0.0.1";
    url.port = String(port);
  }
  return {
    serviceAddress: url.toString(),
    publishBeforeStart: false,
    async publishAll(messages, windowMs, paceLog) {
      const broker = await new RabbitBroker({ url: direct }).connect();
      const publisher = await new RabbitPublish().pair(broker);
      await publishLoad(broker, publisher, key, messages, windowMs, paceLog);
    },
    restartBroker: undefined,
    async cleanup() {
      for (const queue of [key, ...besides]) {
        await brokers.rabbitmq
          .management(`/api/queues/%2F/${encodeURIComponent(queue)}`, { method: "DELETE" })
          .catch((error: unknown) => log(`[chaos] deleting queue ${queue}: ${String(error)}`));
      }
    },
  };
}
