import type { ProtocolBindings } from "./protocolBindings.js";
import { without } from "./protocolBindings.js";

const bindingVersion = "0.5.0";

/**
 * Kafka's bindings (asyncapi/bindings kafka 0.5.0): the consumer group on the receive operation,
 * written as the binding wants it (a schema naming the one value), and the record key on every
 * message, since the runtime's partition key travels as the record key. The descriptor's `topic` is
 * the channel's address already; its retry topic is the retry extension's `retryDestination`.
 */
export const kafkaBindings: ProtocolBindings = {
  channel: () => undefined,
  message: () => ({
    key: {
      type: "string",
      description: "The partition key a message was published with, as the record key.",
    },
    bindingVersion,
  }),
  operation: (facts) =>
    typeof facts.groupId === "string"
      ? { groupId: { type: "string", enum: [facts.groupId] }, bindingVersion }
      : undefined,
  unmapped: (facts) => without(facts, ["topic", "groupId", "retryTopic"]),
  retryDestination: (facts) =>
    typeof facts.retryTopic === "string" ? facts.retryTopic : undefined,
};
