import type { SchemaObject } from "../document.js";
import type { ProtocolBindings } from "./protocolBindings.js";
import { without } from "./protocolBindings.js";

const bindingVersion = "0.1.0";

/** The binding's limit on a queue's name: a longer one stays among the descriptor's facts. */
const maxQueueLength = 255;

/**
 * NATS's bindings (asyncapi/bindings nats 0.1.0): its one field, the operation's `queue`, is a core
 * NATS subscription's queue group (each message to one member of the group). Its server, channel
 * and message bindings are reserved and take no field. A JetStream consumer (its stream, durable
 * name, filter subjects and ack wait) has no field in it, so those facts stay in the operation's
 * extension; the descriptor's `subject` is the channel's address already.
 */
export const natsBindings: ProtocolBindings = {
  channel: () => undefined,
  message: () => undefined,
  operation: (facts) => {
    const queue = queueOf(facts);
    return queue === undefined ? undefined : { queue, bindingVersion };
  },
  unmapped: (facts) =>
    without(facts, queueOf(facts) === undefined ? ["subject"] : ["subject", "queue"]),
  retryDestination: () => undefined,
};

function queueOf(facts: SchemaObject): string | undefined {
  const queue = facts.queue;
  return typeof queue === "string" && queue.length <= maxQueueLength ? queue : undefined;
}
