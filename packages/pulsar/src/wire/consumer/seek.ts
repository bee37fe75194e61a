// Moving a subscription: the SEEK a consumer sends, to a message id or to a publish time, and what
// it drops afterwards. The broker moves the cursor by disconnecting the subscription's consumers,
// which subscribe again; anything queued from the subscribe that sought is from before the move.
import { CommandType } from "../commands/enums.js";
import type { BaseCommand } from "../commands/shapes.js";
import type { MessageId } from "../messageId.js";
import type { Queue } from "../queue.js";
import { entryOf, type Message } from "./message.js";

/** The SEEK to a message id, or to a publish time (ms since the epoch). */
export function seekCommand(
  consumerId: number,
  requestId: number,
  target: MessageId | number,
): BaseCommand {
  return {
    type: CommandType.SEEK,
    seek:
      typeof target === "number"
        ? { consumerId, requestId, messagePublishTime: target }
        : {
            consumerId,
            requestId,
            messageId: {
              ledgerId: BigInt.asUintN(64, target.ledgerId),
              entryId: BigInt.asUintN(64, target.entryId),
              ...(target.batchIndex >= 0 ? { batchIndex: target.batchIndex } : {}),
            },
          },
  };
}

/** Drops what is queued from the subscribe that sought (`consumerId`), keeping later ones' messages. */
export function dropQueuedBefore(queue: Queue<Message>, consumerId: number): void {
  const kept = queue.drain().filter((m) => entryOf(m)?.consumerId !== consumerId);
  for (const message of kept) queue.push(message);
}
