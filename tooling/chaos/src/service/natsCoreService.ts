// The service's side of the core NATS scenarios: a queue group on a plain subject (core NATS keeps
// nothing and acknowledges nothing), each replica a member, or under `nats-core-fanout` each
// replica a plain subscriber of its own (no queue group: every replica is given every message). Under requests each message is answered
// with its own key and sequence number, so the runner can tell whose reply it read. Each replica
// also answers a probe on a subject of its own, by which the runner knows it is subscribed again
// after a fault (natsCorePublishTarget.ts).
import type { HandlerContext, Outcome, RustStream } from "@ruststream/core";
import { NatsBroker, NatsSubject } from "@ruststream/nats";
import { asBody } from "./body.js";
import type { ServiceConfig } from "./config.js";

type Handle = (message: unknown, ctx: HandlerContext) => Promise<Outcome | undefined>;

/** The subject replica `replica` answers probes on. */
export const probeSubject = (key: string, replica: number | string): string =>
  `${key}.probe.${replica}`;

export function mountNatsCore(app: RustStream, config: ServiceConfig, handle: Handle): void {
  const replica = process.env.CHAOS_REPLICA ?? "0";
  app.broker(new NatsBroker({ servers: config.address, reconnectWaitMs: 250 }), (b) => {
    const group = b.subscriber(
      config.broker === "nats-core-fanout"
        ? new NatsSubject(config.key)
        : new NatsSubject(config.key, { queue: config.group }),
    );
    if (config.broker === "nats-core-request") {
      group.reply().handle(async (message, ctx) => {
        // Prints the handling line (with its attempt: above 1, the runtime's republished copy).
        await handle(message, ctx);
        const { k, s } = asBody(message);
        return { k, s };
      });
    } else {
      group.handle(handle);
    }
    b.subscriber(new NatsSubject(probeSubject(config.key, replica)))
      .reply()
      .handle(() => ({ replica }));
  });
}
