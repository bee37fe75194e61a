import { readRetryCount, type SettleResult } from "@ruststream/core";
import { writeRetryCount } from "@ruststream/core/broker";
import { PulsarDelivery } from "./pulsarDelivery.js";

/**
 * A delivery on an Exclusive or Failover subscription. The broker counts no redeliveries there and
 * cannot redeliver one message alone (a negative ack rewinds the whole subscription), so:
 *
 * - `ack()` acknowledges; `nack({ requeue: false })` acknowledges too (Pulsar has no reject).
 * - `nack({ requeue: true })` publishes a copy to the retry topic, which the subscription also
 *   reads, with `x-ruststream-retry-count` one higher, then acks the original.
 * - `nackAfter(ms)` answers `unsupported`: these subscription types dispatch a delayed message at
 *   once, so the runtime holds the delay itself and republishes.
 */
export class SingleDelivery extends PulsarDelivery {
  /** The broker counts nothing on these subscription types. */
  get redeliveryCount(): undefined {
    return undefined;
  }

  protected settleAck(): SettleResult {
    return this.ackNow();
  }

  protected settleNack(requeue: boolean): SettleResult {
    this.owner.assertOpen();
    if (!requeue) return this.ackNow();
    const retryTopic = this.owner.retryTopic;
    if (retryTopic === undefined) return "unsupported";
    const headers = writeRetryCount(this.headers.clone(), readRetryCount(this.headers) + 1);
    return this.thenAck(
      this.owner.publishCopy(this.copyFor(retryTopic, headers), this.owner.subscription),
    );
  }
}
