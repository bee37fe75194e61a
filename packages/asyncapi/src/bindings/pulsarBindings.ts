import type { ProtocolBindings } from "./protocolBindings.js";
import { without } from "./protocolBindings.js";

const bindingVersion = "0.1.0";

/**
 * A Pulsar topic's persistence and namespace, by Pulsar's naming rule: `orders` is
 * `persistent://public/default/orders`, `tenant/ns/orders` is persistent in `tenant/ns`.
 */
function topicParts(address: string): { persistence: string; namespace: string } {
  const scheme = /^(persistent|non-persistent):\/\/(.*)$/.exec(address);
  const persistence = scheme?.[1] ?? "persistent";
  const segments = (scheme?.[2] ?? address).split("/");
  return { persistence, namespace: segments.length >= 3 ? (segments[1] ?? "default") : "default" };
}

/**
 * Pulsar's bindings (asyncapi/bindings pulsar 0.1.0): each channel's namespace and persistence,
 * which the binding requires. Pulsar's binding has no operation object, so the subscription and its
 * type stay among the descriptor's own facts.
 */
export const pulsarBindings: ProtocolBindings = {
  channel: (address) => ({ ...topicParts(address), bindingVersion }),
  message: () => undefined,
  operation: () => undefined,
  unmapped: (facts) => without(facts, []),
  retryDestination: () => undefined,
};
