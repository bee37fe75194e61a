import { JetStreamSubject, NatsSubject } from "../src/index.js";

/** A core NATS subject, as the suites name it. */
export const coreSource = (name: string) => new NatsSubject(name);

/**
 * A durable JetStream consumer on its own stream, declared on first use (memory storage: the suites
 * make many). The same name means the same consumer, as the suites ask.
 */
export const jetStreamSource = (name: string) =>
  new JetStreamSubject(name, {
    stream: name,
    durable: name,
    ackWaitMs: 5000,
    declare: { subjects: [name], storage: "memory" },
  });
