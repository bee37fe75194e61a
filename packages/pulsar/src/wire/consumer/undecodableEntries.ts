// What a partition consumer does with an entry none of whose messages can be handed out. Logged at
// error either way; then handed to the consumer's UndecodableHandler and acked once it is kept
// there (redelivered after a backoff if that fails, so it is never lost), or, with no handler,
// acked with the validation error as Pulsar's Java client does.
import type { Logger } from "@ruststream/core";
import { Backoff, type BackoffOptions } from "../backoff.js";
import { ValidationError } from "../commands/enums.js";
import type { CommandMessage } from "../commands/shapes.js";
import type { PayloadSection } from "../frame.js";
import { MessageId } from "../messageId.js";
import type { UndecodableEntry, UndecodableHandler } from "../undecodable.js";
import type { Acks } from "./acks.js";
import type { Undecodable } from "./entryDecoding.js";

export interface UndecodableSettings {
  /** The topic, or the partition's name. */
  readonly topic: string;
  /** -1 on a non-partitioned topic. */
  readonly partition: number;
  readonly subscription: string;
  readonly handler: UndecodableHandler | undefined;
  readonly log: Logger;
  readonly backoff: BackoffOptions;
  readonly acks: Acks;
  /** Asks the broker for the entry again (unless the consumer is closed by then). */
  readonly redeliver: (ledgerId: bigint, entryId: bigint) => void;
}

export class UndecodableEntries {
  /** Spaces out redeliveries of entries whose handler keeps failing. */
  readonly #backoff: Backoff;
  readonly #settings: UndecodableSettings;

  constructor(settings: UndecodableSettings) {
    this.#settings = settings;
    this.#backoff = new Backoff(settings.backoff);
  }

  handle(command: CommandMessage, section: PayloadSection, { reason, error }: Undecodable): void {
    const { topic, subscription, handler, log, acks } = this.#settings;
    const data = command.messageId;
    const count = section.metadata.numMessagesInBatch;
    const id = new MessageId(
      BigInt.asIntN(64, data.ledgerId),
      BigInt.asIntN(64, data.entryId),
      this.#settings.partition,
      -1,
      count ?? 0,
    );
    const detail = error instanceof Error ? error.message : String(error);
    const fields = {
      topic,
      subscription,
      messageId: id.toString(),
      reason,
      error: detail,
      messages: count ?? 1,
    };
    if (handler === undefined) {
      log.error(
        fields,
        "a Pulsar entry cannot be decoded: acked without delivering its messages (no dead letter declared; Pulsar's Java client drops such entries too)",
      );
      acks.ackInvalid(data, ValidationError[reason]);
      return;
    }
    log.error(
      { ...fields, deadLetter: handler.destination },
      "a Pulsar entry cannot be decoded: moving it as it arrived to the dead letter",
    );
    const entry: UndecodableEntry = {
      topic,
      subscription,
      messageId: id,
      reason,
      error: detail,
      metadata: section.metadata,
      // The frame's bytes may be reused once this turn is over; the handler works later.
      payload: section.payload.slice(),
      redeliveryCount: command.redeliveryCount ?? 0,
    };
    // Through a promise even if handle() throws at once: a handler's failure is the entry's, not
    // the connection's (this runs inside the socket's read).
    Promise.resolve(entry)
      .then((e) => handler.handle(e))
      .then(
        () => {
          this.#backoff.reset();
          // An ordinary ack, through whichever subscribe is live by then (attach sends it if none).
          acks.ackEntry(id.ledgerId, id.entryId);
        },
        (failure: unknown) => {
          // Redelivered after a backoff, so a dead letter that stays unwritable is not hammered
          // (nor the log); unacked, the entry stays on the subscription and is never lost.
          const delay = this.#backoff.next();
          log.error(
            {
              ...fields,
              deadLetter: handler.destination,
              failure: String(failure),
              retryInMs: delay,
            },
            "moving an undecodable Pulsar entry to the dead letter failed: it is redelivered",
          );
          setTimeout(() => this.#settings.redeliver(id.ledgerId, id.entryId), delay).unref();
        },
      );
  }
}
