// @ruststream/pulsar: the broker on top of the wire client comes next (descriptors, subscriptions,
// publisher, in-process mode). Until then the package's entry re-exports nothing of its own; the
// protocol client is `@ruststream/pulsar/wire`.
export { MessageId, PulsarClient } from "./wire/index.js";
