import {
  isRustStreamError,
  type OutgoingMessage,
  RustStreamError,
  type Transaction,
  type TransactionalPublisher,
} from "@ruststream/core";
import { stageTransaction, transactionsMark } from "@ruststream/core/broker";
import type { Frame, PubAck } from "./client/link.js";
import { kvHeaders } from "./names.js";
import { JetStreamPosition } from "./position.js";
import {
  frameOf,
  type NatsPublishOptions,
  type NatsReceipt,
  type PublisherHost,
} from "./publisher.js";
import { cancelSchedule } from "./scheduleCancel.js";
import { type PinnedGroupRef, unpinGroup } from "./unpin.js";

/** The most messages the server takes in one atomic batch. */
export const MAX_BATCH = 1000;

/**
 * A live JetStream publisher: each publish resolves on the stream's acknowledgement, with where it
 * stored the message and whether the message id made it a duplicate. A transaction is one atomic
 * batch (NATS 2.12): its publishes are held until the work resolves, then stored all at once or not
 * at all; a work that throws sends nothing. No requests: on a subject a stream stores, the stream
 * itself would answer one with its acknowledgement.
 */
export class JetStreamPublisher implements TransactionalPublisher<NatsPublishOptions> {
  readonly [transactionsMark] = true as const;
  readonly #host: PublisherHost;

  constructor(host: PublisherHost) {
    this.#host = host;
  }

  publish(message: OutgoingMessage<NatsPublishOptions>): Promise<NatsReceipt> {
    return storeMessage(this.#host, message);
  }

  /**
   * Removes the message schedule pending on `subject` (the subject it was published to) before it
   * fires: the server's purge of the schedule subject. Resolves `true` once removed, `false` when
   * none was pending there.
   */
  cancelSchedule(subject: string): Promise<boolean> {
    return cancelSchedule(this.#host, subject);
  }

  /**
   * Unpins a pinned priority group (`JetStreamSubject` `priority: { policy: "pinned", group }`):
   * the client the server pinned loses the pin, and the server pins the next client a message
   * finds pulling. Resolves `true` when a client held the pin, `false` when none did. A stream,
   * consumer or group the server does not have, or a group that is not pinned, is refused
   * (`invalid-argument`, saying which).
   */
  unpin(group: PinnedGroupRef): Promise<boolean> {
    return unpinGroup(this.#host, group);
  }

  async transaction<T>(work: (tx: Transaction<NatsPublishOptions>) => Promise<T>): Promise<T> {
    this.#host.assertOpen();
    const frames: Frame[] = [];
    const result = await stageTransaction(work, (message) => {
      this.#host.assertOpen();
      frames.push(frameOf(message, this.#host.link.maxPayload, true));
      if (frames.length > MAX_BATCH) {
        throw new RustStreamError(
          "publish-refused",
          `a transaction of more than ${MAX_BATCH} messages: the server takes at most ${MAX_BATCH} in one atomic batch`,
        );
      }
    });
    if (frames.length === 0) return result;
    this.#host.assertOpen();
    for (const frame of frames) this.#host.sent(frame);
    try {
      await this.#host.link.publishAtomic(frames);
    } catch (error) {
      this.#host.assertOpen();
      throw error;
    }
    return result;
  }
}

/**
 * Stores one message in a stream: what a JetStream publish, and a KV delete or purge (its `marks`,
 * the headers the KV clients write), go through. Resolves with the stream's receipt.
 */
export async function storeMessage(
  host: PublisherHost,
  message: OutgoingMessage<NatsPublishOptions>,
  marks: readonly (readonly [string, string])[] = [],
): Promise<NatsReceipt> {
  host.assertOpen();
  const frame = frameOf(message, host.link.maxPayload, true, marks);
  host.sent(frame);
  let ack: PubAck;
  try {
    ack = await host.link.publishStored(frame);
  } catch (error) {
    host.assertOpen();
    throw kvRefusal(message, marks, error);
  }
  return receiptOf(message.name, ack);
}

/**
 * A write to a KV key (`$KV.<bucket>.<key>`) refused for its expected revision (its subject's last
 * sequence) is a compare-and-set that lost: said in the bucket's words. Anything else as it came.
 */
function kvRefusal(
  message: OutgoingMessage<NatsPublishOptions>,
  marks: readonly (readonly [string, string])[],
  error: unknown,
): unknown {
  const expected = message.options?.expect?.lastSubjectSequence;
  const kv = /^\$KV\.([^.]+)\.(.+)$/.exec(message.name);
  if (kv === null || expected === undefined || !isRustStreamError(error, "publish-refused"))
    return error;
  const actual = /wrong last sequence: (\d+)/.exec(error.message)?.[1];
  const operation = marks.find(([name]) => name === kvHeaders.operation)?.[1];
  const verb = operation === "DEL" ? "delete" : operation === "PURGE" ? "purge" : "put";
  return new RustStreamError(
    "publish-refused",
    `the key "${kv[2]}" of the KV bucket "${kv[1]}" is not at revision ${expected}${actual === undefined ? "" : ` (it is at ${actual})`}: the compare-and-set ${verb} stored nothing; read the key again and ${verb} with its revision${verb === "put" ? " (0: the key has no entry)" : ""}`,
    { cause: error },
  );
}

function receiptOf(name: string, ack: PubAck): NatsReceipt {
  return {
    name,
    position: new JetStreamPosition(ack.stream, ack.sequence).toString(),
    stream: ack.stream,
    sequence: ack.sequence,
    duplicate: ack.duplicate,
  };
}
