import type { SchemaObject } from "../document.js";
import type { ProtocolBindings } from "./protocolBindings.js";
import { without } from "./protocolBindings.js";

const bindingVersion = "0.3.0";

/** A queue's name, and its flags where a descriptor states them. */
function queueOf(address: string, facts: SchemaObject | undefined): SchemaObject {
  const flags = Object.fromEntries(
    (["durable", "exclusive", "autoDelete"] as const)
      .filter((flag) => typeof facts?.[flag] === "boolean")
      .map((flag) => [flag, facts?.[flag]]),
  );
  return { name: typeof facts?.queue === "string" ? facts.queue : address, ...flags };
}

/**
 * AMQP 0.9.1's bindings (asyncapi/bindings amqp 0.3.0). Every channel of a RabbitMQ service is a
 * queue: a subscriber reads one, and the runtime publishes (replies, `ctx.out`, dead letters)
 * through the broker's default policy, to the default exchange, where a routing key is a queue's
 * name. So each channel is `is: queue`, with the flags the descriptor states where a subscriber
 * reads it (a bare name states none) and the name alone elsewhere. The binding's channel is a queue
 * or a routing key on one exchange, never both, so the exchanges a queue is bound to, its type
 * (classic, quorum, stream), its prefetch and a stream's offset have no field and stay among the
 * descriptor's own facts. The receive operation says the consumer acknowledges (the runtime
 * settles every delivery). No message binding: its two fields, a content encoding and a message
 * type, are nothing the runtime sets. The vhost is left out: it is the broker's URL's, which no
 * descriptor sees.
 */
export const amqpBindings: ProtocolBindings = {
  channel: (address, facts) => ({ is: "queue", queue: queueOf(address, facts), bindingVersion }),
  message: () => undefined,
  operation: () => ({ ack: true, bindingVersion }),
  unmapped: (facts) => without(facts, ["queue", "durable", "exclusive", "autoDelete"]),
  retryDestination: () => undefined,
};
