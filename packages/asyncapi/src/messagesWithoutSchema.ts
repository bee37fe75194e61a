import type { AsyncApiDocument } from "./document.js";
import { bytesContentType } from "./messageCatalog.js";

/**
 * The names of the document's messages that carry no payload schema, as RustStream's
 * `messages_without_schema()`: assert it empty in a service's tests so no message reaches the
 * document undescribed. Bytes (`application/octet-stream`) are left out: they are their own format.
 */
export function messagesWithoutSchema(doc: AsyncApiDocument): string[] {
  return Object.entries(doc.components?.messages ?? {})
    .filter(
      ([, message]) => message.payload === undefined && message.contentType !== bytesContentType,
    )
    .map(([name]) => name);
}
