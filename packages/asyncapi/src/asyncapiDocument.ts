import { consoleLogger, type Logger, type RustStream } from "@ruststream/core";
import type { AsyncApiDocument } from "./document.js";
import { DocumentBuilder } from "./documentBuilder.js";
import type { MessageGap } from "./messageCatalog.js";
import { describeServers } from "./servers.js";

export interface AsyncApiOptions {
  /**
   * Where the warning for each message without a payload schema goes (default: warn lines on
   * stderr). Pass core's `silentLogger` to say nothing; `messagesWithoutSchema(doc)` lists the same.
   */
  readonly logger?: Logger;
}

/**
 * The AsyncAPI 3.1.0 document of an app, from its own description (`app.describe()`): nothing is
 * connected, and no credential is read, since brokers describe their servers without them.
 */
export function asyncapiDocument(app: RustStream, options: AsyncApiOptions = {}): AsyncApiDocument {
  const description = app.describe();
  const { servers, keys } = describeServers(description.brokers);
  const builder = new DocumentBuilder(
    description.brokers.map((broker, index) => ({ broker, server: keys[index] })),
  );
  const { document, gaps } = builder.build(description, { ...servers });
  const log = options.logger ?? consoleLogger({ level: "warn" });
  for (const gap of gaps) log.warn({ message: gap.name, from: gap.origins }, gapWarning(gap));
  return document;
}

const fix =
  "give it a schema whose validator offers Standard JSON Schema: zod 4.2+, arktype 2.1.28+, or valibot through toStandardJsonSchema from @valibot/to-json-schema";

function gapWarning(gap: MessageGap): string {
  const from = gap.origins.join(", ");
  if (gap.vendor !== undefined) {
    return `AsyncAPI message ${gap.name} (${from}) has no payload schema: its ${gap.vendor} schema gave no JSON Schema (a transform or a refinement JSON Schema cannot express, or a validator without Standard JSON Schema); ${fix}`;
  }
  if (gap.origins.every((origin) => !origin.startsWith("subscriber "))) {
    return `AsyncAPI message ${gap.name} (${from}) has no payload schema: a reply or ctx.out publish is typed in TypeScript only, so the document knows its shape only where the app also subscribes to that destination with a schema`;
  }
  return `AsyncAPI message ${gap.name} (${from}) has no payload schema; ${fix}`;
}
