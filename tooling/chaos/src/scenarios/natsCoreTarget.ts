// A core NATS subject on the NATS server of tooling/brokers, read by the services as one queue group
// through the fault proxy. Nothing to create: a subject exists while someone listens. The runner
// sends the load straight to the server as requests, each again until its reply comes
// (natsCoreRequests.ts says why and what the scenario then promises).
import { isRustStreamError, supportsRequest } from "@ruststream/core";
import { NatsBroker, NatsPublish } from "@ruststream/nats";
import { ensureBrokers, requireEnv } from "@ruststream/tooling-testkit";
import type { Handled, Published } from "../checker.js";
import type { Toxiproxy } from "../faults/toxiproxy.js";
import { bodyOf, publishPaced } from "../load.js";
import {
  NATS_CORE_AGAIN_MS,
  NATS_CORE_GIVE_UP_MS,
  NATS_CORE_REQUEST_TIMEOUT_MS,
  type RequestFailure,
  RequestLedger,
} from "./natsCoreRequests.js";
import type { Target } from "./target.js";

export async function natsCoreTarget(
  key: string,
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  handled: readonly Handled[],
  log: (line: string) => void,
): Promise<Target> {
  const { direct, serviceAddress } = await coreAddresses(proxy, log);
  const ledger = new RequestLedger();
  let messages = 0;
  return {
    serviceAddress,
    publishBeforeStart: false,
    async publishAll(load, windowMs, paceLog) {
      messages = load.length;
      const broker = await new NatsBroker({ servers: direct, reconnectWaitMs: 250 }).connect();
      try {
        const publisher = await new NatsPublish().pair(broker);
        if (!supportsRequest(publisher))
          throw new Error("a core NATS publisher must take requests");
        let lastLogged = Number.NEGATIVE_INFINITY;
        const ask = async (message: Published): Promise<void> => {
          const since = performance.now();
          for (let attempt = 1; ; attempt++) {
            ledger.sent(message.seq);
            try {
              const reply = await publisher.request(
                { name: key, payload: bodyOf(message), partitionKey: message.key },
                { timeoutMs: NATS_CORE_REQUEST_TIMEOUT_MS },
              );
              ledger.answered(message, JSON.parse(new TextDecoder().decode(reply.payload)));
              return;
            } catch (error) {
              ledger.failed(failureOf(error));
              if (performance.now() - lastLogged >= 1_000) {
                lastLogged = performance.now();
                paceLog(
                  `[chaos] request of seq ${message.seq} failed (attempt ${attempt}), again: ${String(error)}`,
                );
              }
            }
            if (performance.now() - since > NATS_CORE_GIVE_UP_MS) {
              ledger.unanswered(message.seq);
              return;
            }
            await new Promise((resolve) => setTimeout(resolve, NATS_CORE_AGAIN_MS));
          }
        };
        // `ask` never rejects and gives up on its own: the pacing's resend stays out of the way.
        await publishPaced(load, ask, windowMs, paceLog, NATS_CORE_GIVE_UP_MS * 2);
      } finally {
        await broker.shutdown();
      }
    },
    restartBroker: undefined,
    verdict: () => ledger.verdict(messages, handled),
    async cleanup() {},
  };
}

function failureOf(error: unknown): RequestFailure {
  if (isRustStreamError(error, "timeout")) return "timeout";
  if (/no responders/i.test(String(error))) return "no responders";
  return "other";
}

/** The shared NATS server's address (the runner's) and the fault proxy's in front of it (the services'). */
export async function coreAddresses(
  proxy: { toxiproxy: Toxiproxy; name: string } | undefined,
  log: (line: string) => void,
): Promise<{ direct: string; serviceAddress: string }> {
  await ensureBrokers(["nats"], log);
  const direct = requireEnv("NATS_URL");
  const { hostname, port } = new URL(direct);
  const serviceAddress =
    proxy === undefined
      ? direct
      : `nats://127.0.0.1:${await proxy.toxiproxy.proxy(proxy.name, `${hostname}:${port}`)}`;
  return { direct, serviceAddress };
}
