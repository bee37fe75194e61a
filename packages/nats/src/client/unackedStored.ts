import { StoredMessage } from "./storedMessage.js";

/**
 * A message of an ordered consumer: its ack policy is none, so the server takes no settlement and
 * the verbs send nothing (a `nak` after a seek, a `working()` beat: nothing to tell).
 */
export class UnackedStored extends StoredMessage {
  ack(): void {}
  async ackConfirmed(): Promise<void> {}
  nak(): void {}
  term(): void {}
  working(): void {}
}
