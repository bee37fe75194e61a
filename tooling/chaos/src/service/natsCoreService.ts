// The service's side of the core NATS scenario: a queue group on a plain subject (core NATS keeps
// nothing and acknowledges nothing), each replica a member, answering each request with the
// message's own key and sequence number so the runner can tell whose reply it read.
import type { HandlerContext, Outcome, RustStream } from "@ruststream/core";
import { NatsBroker, NatsSubject } from "@ruststream/nats";
import { asBody } from "./body.js";
import type { ServiceConfig } from "./config.js";

type Handle = (message: unknown, ctx: HandlerContext) => Promise<Outcome | undefined>;

export function mountNatsCore(app: RustStream, config: ServiceConfig, handle: Handle): void {
  app.broker(new NatsBroker({ servers: config.address, reconnectWaitMs: 250 }), (b) => {
    b.subscriber(new NatsSubject(config.key, { queue: config.group }))
      .reply()
      .handle(async (message, ctx) => {
        // Prints the handling line (with its attempt: above 1, the runtime's republished copy).
        await handle(message, ctx);
        const { k, s } = asBody(message);
        return { k, s };
      });
  });
}
