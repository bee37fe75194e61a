import type { AddressedSource } from "@ruststream/core";
import { sourceMark } from "@ruststream/core/broker";

/**
 * The descriptor: a channel. Plain configuration, no I/O; one descriptor may be subscribed many
 * times. The broker cannot requeue, so the runtime republishes retry copies to the channel itself.
 */
export class Channel implements AddressedSource {
  readonly [sourceMark] = "channels";
  readonly copies = "addressed" as const;
  readonly name: string;

  constructor(name: string) {
    this.name = name;
  }

  get redeliveryAddress(): string {
    return this.name;
  }
}
