// Attribute names and values from the OpenTelemetry messaging semantic conventions (the messaging
// spans of semconv 1.27 and later: `messaging.operation.type`, `messaging.consumer.group.name`).
// Kept as constants of our own: @opentelemetry/semantic-conventions would be a second dependency
// for a dozen strings.

export const messagingSystem = "messaging.system";
export const destinationName = "messaging.destination.name";
export const destinationPartitionId = "messaging.destination.partition.id";
export const operationType = "messaging.operation.type";
export const operationName = "messaging.operation.name";
export const messageId = "messaging.message.id";
export const conversationId = "messaging.message.conversation_id";
export const consumerGroupName = "messaging.consumer.group.name";
export const batchMessageCount = "messaging.batch.message_count";
export const errorType = "error.type";

/** Ours, beside them: the delivery's attempt as the runtime counts it (1 on the first). */
export const attempt = "ruststream.attempt";
/** Ours: what the handler asked for, when it returned an outcome rather than a value or nothing. */
export const outcome = "ruststream.outcome";
/** Ours: what a publish was for (`reply`, `out`, `retry-copy`, `dead-letter`, `app`, `request`). */
export const purpose = "ruststream.publish.purpose";
