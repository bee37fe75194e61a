import { type AddressedSource, type Bindings, RustStreamError } from "@ruststream/core";
import { positive, sourceMark } from "@ruststream/core/broker";
import { checkSubject } from "./names.js";
import {
  type ConsumerSettings,
  checkDeliver,
  checkExpires,
  checkStream,
  copiesTo,
  type DeliverPolicy,
  type StreamDeclaration,
} from "./sources.js";

export interface OrderedJetStreamOptions {
  /** The stream that stores the subjects: it must exist, or `declare` creates it. */
  readonly stream: string;
  /** Where the consumer starts (default `"all"`). */
  readonly deliver?: DeliverPolicy;
  /** How long one pull request waits at the server (default 5000 ms, at least 1000). */
  readonly pullExpiresMs?: number;
  /**
   * The most messages the pulls ask for at once (default 256), asked again ahead of need; also the
   * most that wait in the subscription, past which it asks for none.
   */
  readonly fetchSize?: number;
  /** Where retry copies go: required for a wildcard or several subjects. */
  readonly redeliverTo?: string;
  /** Creates the stream when it is missing, with these settings. */
  readonly declare?: StreamDeclaration;
}

/**
 * An ordered consumer's ack wait: none, as it takes no acks (ack policy none). The subscription
 * sends no `working()` beat for it; the value only fills the settings' shape.
 */
const NO_ACK_WAIT_MS = 30_000;

/**
 * A JetStream ordered consumer on one subject or several: an ephemeral pull consumer the client
 * makes (no name), handing over what the stream holds and what arrives in stream order, one
 * message at a time as the stream stored them. The server takes no acks (ack policy none): a
 * message read is read. On a gap in its delivery sequence, a lost heartbeat or a consumer deleted
 * under it, the client creates it again after the last message it read, so nothing is skipped and
 * nothing comes twice. Settlement is core NATS's: every verb answers `unsupported` (the runtime
 * republishes a retry copy to the subject, or `redeliverTo`, which the stream stores again).
 */
export class OrderedJetStreamSubject implements AddressedSource {
  readonly [sourceMark] = "nats";
  readonly copies = "addressed" as const;
  readonly ordered = true as const;
  readonly name: string;
  readonly subjects: readonly string[];
  readonly stream: string;
  /** Ordered consumers are ephemeral: the client's, gone with it. */
  readonly durable = undefined;
  readonly commit = "auto" as const;
  readonly declare: StreamDeclaration | undefined;
  readonly settings: ConsumerSettings;
  readonly redeliveryAddress: string;
  readonly bindings: Bindings;

  constructor(subjects: string | readonly string[], options: OrderedJetStreamOptions) {
    const list = typeof subjects === "string" ? [subjects] : [...subjects];
    if (list.length === 0) {
      throw new RustStreamError(
        "invalid-argument",
        "OrderedJetStreamSubject needs a subject or several",
      );
    }
    for (const s of list) checkSubject(s, "OrderedJetStreamSubject");
    this.stream = checkStream(options?.stream, list, "OrderedJetStreamSubject");
    this.subjects = list;
    this.name = list.join(",");
    this.declare = options.declare;
    this.settings = {
      ackWaitMs: NO_ACK_WAIT_MS,
      maxAckPending: undefined,
      deliver: checkDeliver(options.deliver ?? "all", "OrderedJetStreamSubject"),
      maxDeliver: undefined,
      backoffMs: undefined,
      pullExpiresMs: checkExpires(options.pullExpiresMs, "OrderedJetStreamSubject"),
      fetchSize: positive("fetchSize", options.fetchSize, 256),
      inactiveThresholdMs: undefined,
      priority: undefined,
    };
    this.redeliveryAddress = copiesTo(list, options.redeliverTo, "OrderedJetStreamSubject");
    this.bindings = { nats: { subjects: list, stream: this.stream, ordered: true } };
  }
}
