// A message's own fields as its metadata carries them: the entry's MessageMetadata for a message
// sent alone, its SingleMessageMetadata inside a batch (the same fields, the same types).
import type { SingleMessageMetadata } from "../commands/shapes.js";
import { toKeyValues } from "../keyValues.js";
import type { OutgoingMessage } from "./producerOptions.js";

type MessageFields = Pick<
  SingleMessageMetadata,
  "partitionKey" | "orderingKey" | "properties" | "eventTime"
>;

/** True for a message with nothing but its payload (no key, properties or event time). */
export function carriesPayloadOnly(message: OutgoingMessage): boolean {
  return (
    message.key === undefined &&
    message.orderingKey === undefined &&
    message.properties === undefined &&
    message.eventTime === undefined
  );
}

/** Writes the message's key, ordering key, properties and event time into `metadata`. */
export function applyMessageFields(metadata: MessageFields, message: OutgoingMessage): void {
  if (message.key !== undefined) metadata.partitionKey = message.key;
  if (message.orderingKey !== undefined) metadata.orderingKey = message.orderingKey;
  const properties = toKeyValues(message.properties);
  if (properties) metadata.properties = properties;
  if (message.eventTime !== undefined) metadata.eventTime = message.eventTime;
}
