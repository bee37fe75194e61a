import { HeaderMap, type OutgoingMessage } from "@ruststream/core";
import { undecodableHeaders } from "../names.js";
import { PulsarMessagePosition } from "../position.js";
import type { PulsarPublishOptions } from "../publisher.js";
import { CompressionType, compressionName } from "../wire/commands/enums.js";
import type { UndecodableEntry } from "../wire/undecodable.js";

/**
 * The dead letter of an entry the consumer could not decode. Nothing decoded from it can be
 * trusted, so its payload is the entry's payload as it travelled (compressed; a batch's messages
 * concatenated; empty when its frame was over the limit and skipped unread, which the reason
 * says), with the headers that say how to read it, the entry's own properties (a single
 * message's headers; a batch keeps its messages' inside the payload), its key, and core's origin,
 * which the publisher writes with Pulsar's REAL_TOPIC and ORIGIN_MESSAGE_ID.
 */
export function undecodableCopy(
  entry: UndecodableEntry,
  source: { readonly name: string; readonly retryTopic: string | undefined },
  deadLetterTopic: string,
): OutgoingMessage<PulsarPublishOptions> {
  const metadata = entry.metadata;
  const headers = new HeaderMap();
  for (const { key, value } of metadata.properties ?? []) headers.set(key, value);
  const compression = metadata.compression ?? CompressionType.NONE;
  headers.set(undecodableHeaders.compression, compressionName(compression) ?? `${compression}`);
  if (metadata.uncompressedSize !== undefined)
    headers.set(undecodableHeaders.uncompressedSize, `${metadata.uncompressedSize}`);
  if (metadata.numMessagesInBatch !== undefined)
    headers.set(undecodableHeaders.batchSize, `${metadata.numMessagesInBatch}`);
  const options: { -readonly [K in keyof PulsarPublishOptions]: PulsarPublishOptions[K] } = {};
  if (metadata.orderingKey !== undefined) options.orderingKey = metadata.orderingKey;
  if (metadata.eventTime) options.eventTime = metadata.eventTime;
  const id = entry.messageId;
  return {
    name: deadLetterTopic,
    payload: entry.payload,
    headers,
    ...(metadata.partitionKey === undefined ? {} : { partitionKey: metadata.partitionKey }),
    options,
    deadLetterOrigin: {
      source: source.name,
      ...(id.partition >= 0 ? { partition: id.partition } : {}),
      position: new PulsarMessagePosition(id, {
        retry: entry.topic === source.retryTopic,
      }).toString(),
      reason: `undecodable entry (${entry.reason}): ${entry.error}`,
    },
  };
}
