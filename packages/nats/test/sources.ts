import type { Publisher, TransactionalPublisher } from "@ruststream/core";
import { transactionsMark } from "@ruststream/core/broker";
import {
  type ConnectedNatsBroker,
  type JetStreamPublisher,
  JetStreamSubject,
  type KvBucketDeclaration,
  KvWatch,
  kvSubject,
  NatsPublish,
  NatsSubject,
  OrderedJetStreamSubject,
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
  // The transactions suite's publishes are atomic batches.
  atomicPublish: true,
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
 * The same, bound to a durable push consumer it declares: the server pushes to a deliver subject
 * of the suite's own, outside the stream.
 */
export const pushSource = (name: string) =>
  new JetStreamSubject(name, {
    stream: name,
    durable: name,
    ackWaitMs: 5000,
    inactiveThresholdMs: 600_000,
    declare: declaration(name),
    push: { declare: { deliverSubject: `push.${name}`, idleHeartbeatMs: 5000, flowControl: true } },
  });

/**
 * An ephemeral push consumer on one suite's subject, declared from now with a deliver subject of
 * the subscription's own: as an ordered consumer, a new client reads nothing an earlier one left.
 */
export const ephemeralPushSource = (name: string) =>
  new JetStreamSubject(name, {
    stream: name,
    ackWaitMs: 5000,
    deliver: "new",
    declare: declaration(name),
    push: {
      declare: {
        deliverSubject: `push.${name}.${(++deliverSubjects).toString(36)}`,
        idleHeartbeatMs: 5000,
        flowControl: true,
      },
    },
  });

/** Made deliver subjects, so no two ephemeral push consumers of a run share one. */
let deliverSubjects = 0;

/**
 * An ordered consumer on one suite's subject, from now: the client's own, so a new client reads
 * nothing an earlier one left (not durable), and nothing published before it opened.
 */
export const orderedSource = (name: string) =>
  new OrderedJetStreamSubject(name, { stream: name, deliver: "new", declare: declaration(name) });

/**
 * A JetStream publisher that makes sure the subject's stream exists before its first publish: a
 * suite may publish before it subscribes, and only a stream that is there stores a message.
 */
export async function storingPublisher(connected: ConnectedNatsBroker): Promise<Publisher<never>> {
  const inner = (await new NatsPublish({ jetStream: true }).pair(connected)) as JetStreamPublisher;
  const known = new Set<string>();
  const ensure = async (name: string) => {
    connected.assertOpen();
    if (known.has(name)) return;
    await connected.link.ensureStream(name, [name], declaration(name));
    known.add(name);
    streamsMade.add(name);
  };
  const publisher: TransactionalPublisher = {
    [transactionsMark]: true,
    publish: async (message) => {
      await ensure(message.name);
      return inner.publish(message);
    },
    // The suite's transactions publish to one subject, whose stream is made on its first publish.
    transaction: (work) =>
      inner.transaction((tx) =>
        work({
          publish: async (message) => {
            await ensure(message.name);
            return tx.publish(message);
          },
        }),
      ),
  };
  return publisher;
}

/** A suite's bucket: memory, and a key's 64 entries (the most a bucket keeps), more than a suite puts. */
const bucketDeclaration: KvBucketDeclaration = { storage: "memory", history: 64 };

/** The buckets the suites made on a server, for the test file's clean-up. */
export const bucketsMade = new Set<string>();

/**
 * A watch of one suite's bucket, named as its subject (`rs-test-...` is a valid bucket name and
 * key): its one key is the name too, so a delivery's name is the suite's. A watch is a consumer of
 * its own, ephemeral, from now: a new client reads nothing another left (not durable), and nothing
 * put before it opened.
 */
export const kvSource = (name: string) =>
  new KvWatch(name, { keys: name, start: "new", ackWaitMs: 5000, declare: bucketDeclaration });

/**
 * A publisher putting each suite message to the key of its name in the bucket of its name (a
 * JetStream publish to `$KV.<bucket>.<key>`), declaring the bucket first.
 */
export async function kvPublisher(connected: ConnectedNatsBroker): Promise<Publisher<never>> {
  const inner = (await new NatsPublish({ jetStream: true }).pair(connected)) as JetStreamPublisher;
  return {
    publish: async (message) => {
      connected.assertOpen();
      await connected.link.ensureBucket(message.name, bucketDeclaration);
      bucketsMade.add(message.name);
      return inner.publish({ ...message, name: kvSubject(message.name, message.name) });
    },
  };
}
