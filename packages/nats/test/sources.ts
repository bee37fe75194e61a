import type { Publisher } from "@ruststream/core";
import {
  type ConnectedNatsBroker,
  JetStreamSubject,
  NatsPublish,
  NatsSubject,
  type StreamDeclaration,
} from "../src/index.js";

/** A core NATS subject, as the suites name it. */
export const coreSource = (name: string) => new NatsSubject(name);

/**
 * Each suite's subject is stored in a stream of its own, named as the subject (`rs-test-...` is a
 * valid stream name): memory storage, and an hour at most for what the suites leave behind.
 */
const declaration = (name: string): StreamDeclaration => ({
  subjects: [name],
  storage: "memory",
  maxAgeMs: 3_600_000,
});

/** The streams the suites made on a server, for the test file's clean-up. */
export const streamsMade = new Set<string>();

/**
 * A durable JetStream consumer on one suite's subject. The same name means the same consumer, as
 * the suites ask; the server deletes it 10 minutes after its last pull.
 */
export const jetStreamSource = (name: string) =>
  new JetStreamSubject(name, {
    stream: name,
    durable: name,
    ackWaitMs: 5000,
    inactiveThresholdMs: 600_000,
    declare: declaration(name),
  });

/**
 * A JetStream publisher that makes sure the subject's stream exists before its first publish: a
 * suite may publish before it subscribes, and only a stream that is there stores a message.
 */
export async function storingPublisher(connected: ConnectedNatsBroker): Promise<Publisher<never>> {
  const inner = await new NatsPublish({ jetStream: true }).pair(connected);
  const known = new Set<string>();
  return {
    publish: async (message) => {
      connected.assertOpen();
      if (!known.has(message.name)) {
        await connected.link.ensureStream(message.name, [message.name], declaration(message.name));
        known.add(message.name);
        streamsMade.add(message.name);
      }
      return inner.publish(message);
    },
  };
}
