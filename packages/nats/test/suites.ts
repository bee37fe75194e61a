import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import type { Broker } from "@ruststream/core";
import { type Capabilities, conformance } from "@ruststream/testing/conformance";
import { requireEnv } from "@ruststream/tooling-testkit";
import { afterAll, describe } from "vitest";
import {
  type ConnectedNatsBroker,
  JetStreamPosition,
  NatsBroker,
  NatsPublish,
  type NatsSource,
} from "../src/index.js";
import { kvPublisher, storingPublisher, streamsMade } from "./sources.js";

/** Every suite that fits, against `makeBroker`'s clients, for one kind of source. */
export function everySuite(
  makeBroker: () => Broker<ConnectedNatsBroker>,
  makeSource: (name: string) => NatsSource,
  capabilities: Capabilities,
  timing: { arrivalMs: number; silenceMs: number },
  options: { readonly jetStream: boolean; readonly kv?: boolean },
): void {
  const factories = {
    makeBroker,
    makeSource,
    capabilities,
    timing,
    // JetStream publishes resolve on the stream's acknowledgement; core ones once the server has them.
    makePublisher: (connected: ConnectedNatsBroker) =>
      options.kv === true
        ? kvPublisher(connected)
        : options.jetStream
          ? storingPublisher(connected)
          : new NatsPublish().pair(connected),
  };
  conformance.routing(factories);
  conformance.lifecycle(factories);
  conformance.settlement(factories);
  conformance.messageShape(factories);
  conformance.batches(factories);
  conformance.seeking({
    ...factories,
    // A watch's subscription is named `<bucket>:<keys>`; its stream is the bucket's.
    unknownPosition: (subscription) =>
      new JetStreamPosition(
        options.kv === true ? `KV_${subscription.name.split(":")[0]}` : subscription.name,
        10n ** 15n,
      ),
  });
  conformance.transactions(factories);
  conformance.requestReply(factories);
  // A watch makes no retry copies (the server requeues; a copy put to a key would be a new put).
  if (options.kv !== true) conformance.redeliveryAddress(factories);
}

/**
 * Every suite against the real server for one kind of JetStream consumer, each suite's subject on a
 * stream of its own; the streams go once the file's tests end, as the server outlives the run.
 */
export function jetStreamSuites(
  title: string,
  makeSource: (name: string) => NatsSource,
  capabilities: Capabilities,
): void {
  describe(title, () => {
    everySuite(
      () => new NatsBroker({ servers: requireEnv("NATS_URL") }),
      makeSource,
      capabilities,
      { arrivalMs: 5000, silenceMs: 300 },
      { jetStream: true },
    );
  });
  afterAll(async () => {
    const nc = await connect({ servers: requireEnv("NATS_URL") });
    try {
      const jsm = await jetstreamManager(nc);
      for (const stream of streamsMade) await jsm.streams.delete(stream).catch(() => undefined);
    } finally {
      await nc.close();
    }
  });
}
