// A JetStream stream on the NATS server of tooling/brokers (file storage), or, for the scenario
// that restarts the server, on a nats-server of the scenario's own. The runner creates the stream
// (the scenario's subject and its dead letter's) before the services start, publishes the load
// straight to the server, and the services connect through the fault proxy.
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { NatsBroker, NatsPublish } from "@ruststream/nats";
import { ensureBrokers, requireEnv } from "@ruststream/tooling-testkit";
import { OwnNatsServer } from "../faults/ownNatsServer.js";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { publishLoad } from "../load.js";
import type { Target } from "./target.js";

export async function natsTarget(
  key: string,
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  ownServer: boolean,
  log: (line: string) => void,
): Promise<Target> {
  let own: OwnNatsServer | undefined;
  if (ownServer) own = await OwnNatsServer.start(log);
  else await ensureBrokers(["nats"], log);
  const direct = own?.url ?? requireEnv("NATS_URL");
  const { hostname, port } = new URL(direct);
  const serviceAddress =
    proxy === undefined
      ? direct
      : `nats://127.0.0.1:${await proxy.toxiproxy.proxy(proxy.name, `${hostname}:${port}`)}`;
  await manage(direct, (jsm) =>
    jsm.streams.add({ name: key, subjects: [key, `${key}.dlq`], storage: "file" }),
  );
  return {
    serviceAddress,
    publishBeforeStart: false,
    async publishAll(messages, windowMs, paceLog) {
      const broker = await new NatsBroker({ servers: direct, reconnectWaitMs: 250 }).connect();
      const publisher = await new NatsPublish({ jetStream: true }).pair(broker);
      await publishLoad(broker, publisher, key, messages, windowMs, paceLog);
    },
    // SIGKILL of the scenario's own server, started again on its files: the stream, its messages
    // and the durable consumer survive.
    restartBroker: own === undefined ? undefined : () => (own as OwnNatsServer).restart(),
    async cleanup() {
      try {
        await manage(direct, (jsm) => jsm.streams.delete(key));
      } finally {
        await own?.dispose();
      }
    },
  };
}

async function manage<T>(
  url: string,
  work: (jsm: Awaited<ReturnType<typeof jetstreamManager>>) => Promise<T>,
): Promise<T> {
  const nc = await connect({ servers: url });
  try {
    return await work(await jetstreamManager(nc));
  } finally {
    await nc.close();
  }
}
