import type { Message, Options } from "amqplib";
import type { LinkProperties, PublishRequest } from "../link.js";
import type { Table } from "../topology/topology.js";

/** A request's properties as amqplib publishes them. */
export function publishOptions(request: PublishRequest): Options.Publish {
  const p = request.properties;
  return {
    mandatory: request.mandatory,
    headers: p.headers,
    ...(p.persistent === true ? { persistent: true } : {}),
    ...(p.contentType === undefined ? {} : { contentType: p.contentType }),
    ...(p.correlationId === undefined ? {} : { correlationId: p.correlationId }),
    ...(p.replyTo === undefined ? {} : { replyTo: p.replyTo }),
    ...(p.messageId === undefined ? {} : { messageId: p.messageId }),
    ...(p.priority === undefined ? {} : { priority: p.priority }),
    ...(p.expiration === undefined ? {} : { expiration: p.expiration }),
    ...(p.timestamp === undefined ? {} : { timestamp: p.timestamp }),
  };
}

/** What amqplib handed over, as the link's properties. */
export function linkProperties(message: Message): LinkProperties {
  const p = message.properties;
  return {
    headers: (p.headers ?? {}) as Table,
    contentType: stringOr(p.contentType),
    correlationId: stringOr(p.correlationId),
    replyTo: stringOr(p.replyTo),
    messageId: stringOr(p.messageId),
    priority: typeof p.priority === "number" ? p.priority : undefined,
    expiration: p.expiration === undefined ? undefined : String(p.expiration),
    persistent: p.deliveryMode === 2,
    timestamp: typeof p.timestamp === "number" ? p.timestamp : undefined,
  };
}

function stringOr(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** The content as the Buffer amqplib writes, without a copy. */
export function contentBuffer(content: Uint8Array): Buffer {
  return Buffer.isBuffer(content)
    ? content
    : Buffer.from(content.buffer, content.byteOffset, content.byteLength);
}
