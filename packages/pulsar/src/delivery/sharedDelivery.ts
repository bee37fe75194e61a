import type { ReadonlyHeaderMap, SettleResult } from "@ruststream/core";
import { deadLetterCopyOf, deliveriesOf, writeRetryCount } from "@ruststream/core/broker";
import type { LinkMessage } from "../link/link.js";
import { type DeliveryOwner, PulsarDelivery } from "./pulsarDelivery.js";

/** The cap and dead letter a Shared or Key_Shared subscription applies, where declared. */
export interface DeadLetterPolicy {
  readonly maxAttempts: number;
  /** The dead-letter topic, as declared. */
  readonly topic: string;
  /** The subscription the dead-letter topic is created with. */
  readonly initialSubscription: string;
}

/** What a Shared or Key_Shared delivery needs beyond every delivery's owner. */
export interface SharedOwner extends DeliveryOwner {
  readonly deadLetter: DeadLetterPolicy | undefined;
}

/**
 * A delivery on a Shared or Key_Shared subscription. The broker counts its redeliveries, so:
 *
 * - `ack()` acknowledges; `nack({ requeue: false })` acknowledges too (Pulsar has no reject), or
 *   moves the message to the dead letter where one is declared.
 * - `nack({ requeue: true })` is a negative ack: the broker delivers it again (to any consumer)
 *   with its count one higher; at the declared cap it goes to the dead letter instead.
 * - `nackAfter(ms)` publishes a copy to the retry topic with its delivery time (Pulsar's delayed
 *   delivery), then acks: the delay survives a restart. The copy's retry-count header carries the
 *   deliveries the original had, so the attempt keeps counting.
 */
export class SharedDelivery extends PulsarDelivery {
  protected declare readonly owner: SharedOwner;

  // biome-ignore lint/complexity/noUselessConstructor: narrows the owner to the one with a dead letter
  constructor(owner: SharedOwner, message: LinkMessage, fromRetryTopic: boolean) {
    super(owner, message, fromRetryTopic);
  }

  /** The broker's count, 1 on the first delivery. */
  get redeliveryCount(): number {
    return this.message.redeliveryCount + 1;
  }

  protected settleAck(): SettleResult {
    return this.ackNow();
  }

  protected settleNack(requeue: boolean): SettleResult {
    this.owner.assertOpen();
    const deadLetter = this.owner.deadLetter;
    if (deadLetter !== undefined && (!requeue || this.attempt >= deadLetter.maxAttempts)) {
      return this.#moveTo(deadLetter, requeue ? "max-attempts" : "rejected");
    }
    if (!requeue) return this.ackNow();
    this.owner.redeliver(this);
    this.owner.settled(this);
    return "ok";
  }

  protected override settleNackAfter(ms: number): SettleResult {
    this.owner.assertOpen();
    const retryTopic = this.owner.retryTopic;
    if (retryTopic === undefined) return "unsupported";
    const deadLetter = this.owner.deadLetter;
    if (deadLetter !== undefined && this.attempt >= deadLetter.maxAttempts) {
      return this.#moveTo(deadLetter, "max-attempts");
    }
    const copy = this.copyFor(retryTopic, this.#counted(), {
      deliverAt: Math.ceil(this.owner.now() + ms),
    });
    return this.thenAck(this.owner.publishCopy(copy, this.owner.subscription));
  }

  /**
   * The message with where it came from and why, and the deliveries it had in its retry count (as
   * the core's own dead letters write it), then the original acked.
   */
  #moveTo(deadLetter: DeadLetterPolicy, reason: string): Promise<"ok"> {
    const { headers, deadLetterOrigin } = deadLetterCopyOf(this, reason);
    const copy = { ...this.copyFor(deadLetter.topic, headers), deadLetterOrigin };
    return this.thenAck(this.owner.publishCopy(copy, deadLetter.initialSubscription));
  }

  // The copy carries the deliveries the original had, so its own first delivery counts one more.
  #counted(): ReadonlyHeaderMap {
    return writeRetryCount(this.headers.clone(), deliveriesOf(this));
  }
}
