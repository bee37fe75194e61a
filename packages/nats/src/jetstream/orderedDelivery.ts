import type { SettleResult } from "@ruststream/core";
import { JetStreamDelivery } from "./jetStreamDelivery.js";

/**
 * A message an ordered consumer delivered. Its ack policy is none: the server takes no
 * settlement, so every settle answers `unsupported`, as a core NATS delivery's does, and the
 * delivery stays open for the caller (the runtime republishes a retry copy where it must retry;
 * an ack or a drop is advisory). The first settle call is where the consumer is done with it:
 * the message's `ack()` sends nothing to the server, and releases the in-process stand-in's count
 * of work in flight for a test's harness.
 */
export class OrderedDelivery extends JetStreamDelivery {
  protected override settleAck(): SettleResult {
    return this.#unsupported();
  }
  protected override settleNack(): SettleResult {
    return this.#unsupported();
  }
  protected override settleNackAfter(): SettleResult {
    return this.#unsupported();
  }

  #unsupported(): SettleResult {
    this.owner.assertOpen();
    this.owner.settled(this);
    this.message.ack();
    return "unsupported";
  }
}
