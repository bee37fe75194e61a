import type { Message } from "amqplib";
import type { PublishRequest } from "../link.js";
import { contentBuffer } from "./properties.js";

/** A publish sent with `mandatory`, until its confirm or its transaction's commit answers it. */
export interface AwaitingReturn {
  readonly request: PublishRequest;
  /** The server's `basic.return` text, once it could route the message nowhere. */
  returned: string | undefined;
}

/**
 * Marks the publish a `basic.return` is for. A return carries no delivery tag: it goes to the
 * earliest waiting publish with the same exchange, routing key and body (two such publishes are the
 * same to their callers).
 */
export function matchReturn(waiting: Iterable<AwaitingReturn>, message: Message): void {
  const { exchange, routingKey, replyText } = message.fields as unknown as {
    exchange: string;
    routingKey: string;
    replyText?: string;
  };
  for (const entry of waiting) {
    const r = entry.request;
    if (entry.returned !== undefined) continue;
    if (r.exchange !== exchange || r.routingKey !== routingKey) continue;
    if (!contentBuffer(r.content).equals(message.content)) continue;
    entry.returned = replyText ?? "NO_ROUTE";
    return;
  }
}
