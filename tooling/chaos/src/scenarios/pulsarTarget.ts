// A topic on the Pulsar standalone of tooling/brokers, read by a Shared or Key_Shared subscription.
// The load is published straight to the broker; the services connect through the fault proxy. A
// Pulsar client looks a topic up and then connects to the owner's advertised URL, which would
// bypass the proxy: the standalone answers a lookup for a topic it owns with
// proxy_through_service_url set, and the wire client then keeps its sockets on the address the
// lookup went to. The target checks that before the run, so a broker that stops answering so fails
// the scenario instead of silently taking the proxy out of it.
import { PulsarBroker, PulsarPublish } from "@ruststream/pulsar";
import { PulsarClient } from "@ruststream/pulsar/wire";
import { brokers, ensureBrokers, requireEnv } from "@ruststream/tooling-testkit";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { publishLoad } from "../load.js";
import type { Target } from "./target.js";

export async function pulsarTarget(
  key: string,
  subscription: string,
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  log: (line: string) => void,
): Promise<Target> {
  await ensureBrokers(["pulsar"], log);
  const direct = requireEnv("PULSAR_URL");
  const admin = requireEnv("PULSAR_ADMIN_URL");
  const { hostname, port } = new URL(direct);
  const serviceAddress =
    proxy === undefined
      ? direct
      : `pulsar://127.0.0.1:${await proxy.toxiproxy.proxy(proxy.name, `${hostname}:${port}`)}`;
  if (proxy !== undefined) await assertThroughProxy(serviceAddress, key);
  return {
    serviceAddress,
    publishBeforeStart: false,
    async publishAll(messages, windowMs, paceLog) {
      const broker = await new PulsarBroker({ url: direct }).connect();
      const publisher = await new PulsarPublish().pair(broker);
      await publishLoad(broker, publisher, key, messages, windowMs, paceLog);
    },
    // SIGKILL of the standalone, started again on its data (metadata store, bookie journal and
    // ledgers): the topic, its backlog and the subscription's cursor survive. The scenario holds
    // the standalone's `exclusive` lock meanwhile (main.ts), so no other test restarts it.
    restartBroker: () => brokers.pulsar.restart({ hard: true }),
    async cleanup() {
      for (const topic of [key, `${key}-${subscription}-RETRY`]) {
        const response = await fetch(
          `${admin}/admin/v2/persistent/public/default/${topic}?force=true`,
          { method: "DELETE" },
        );
        if (!response.ok && response.status !== 404) {
          log(`[chaos] deleting ${topic}: ${response.status} ${await response.text()}`);
        }
      }
    },
  };
}

/** Fails unless a lookup through `serviceAddress` keeps the topic's socket on that address. */
async function assertThroughProxy(serviceAddress: string, topic: string): Promise<void> {
  const client = new PulsarClient({ serviceUrl: serviceAddress });
  try {
    const found = await client.lookup(`persistent://public/default/${topic}`);
    if (found.physical.url !== serviceAddress) {
      throw new Error(
        `a lookup through ${serviceAddress} sends the topic's traffic to ${found.physical.url}: the faults would miss it`,
      );
    }
  } finally {
    await client.close();
  }
}
