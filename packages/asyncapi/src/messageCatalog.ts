import type { BindingsObject, MessageObject, SchemaObject } from "./document.js";
import { headersSchema, headersSchemaKey } from "./headers.js";
import { refTo, toId, uniqueId } from "./ids.js";
import { placePayloadSchema } from "./payloadSchema.js";

/** The media type of a payload whose bytes are its own format: no schema is missing there. */
export const bytesContentType = "application/octet-stream";

/** One message the document needs, as a subscriber or a destination contributes it. */
export interface MessageCandidate {
  /** The name it gets unless it is taken by a different message. */
  readonly name: string;
  readonly contentType: string;
  readonly schema?: SchemaObject | undefined;
  /** The validator that gave the schema, or that was asked and gave none. */
  readonly vendor?: string | undefined;
  readonly bindings?: BindingsObject | undefined;
  /** Who contributes it, for the warning when it has no schema: `subscriber orders`. */
  readonly origin: string;
}

/** A message with no payload schema, and what the app could do about it. */
export interface MessageGap {
  readonly name: string;
  readonly origins: readonly string[];
  /** The validator that gave no JSON Schema, where a schema was given. */
  readonly vendor: string | undefined;
}

interface Entry {
  readonly identity: string;
  readonly message: MessageObject;
  readonly origins: string[];
  readonly vendor: string | undefined;
  correlated: boolean;
}

/**
 * The document's message components and the payload schemas they point at. Two contributions with
 * one name, media type, schema and bindings are one message (a reply landing on a channel the app
 * also reads); a different message under a taken name gets a suffix.
 */
export class MessageCatalog {
  readonly #entries = new Map<string, Entry>();
  readonly #schemas: Record<string, SchemaObject> = { [headersSchemaKey]: headersSchema() };

  add(candidate: MessageCandidate): string {
    const base = toId(candidate.name);
    const identity = JSON.stringify([
      candidate.contentType,
      candidate.schema ?? null,
      candidate.bindings ?? null,
    ]);
    for (let n = 1; ; n += 1) {
      const name = n === 1 ? base : `${base}_${n}`;
      const entry = this.#entries.get(name);
      if (entry === undefined) break;
      if (entry.identity === identity) {
        if (!entry.origins.includes(candidate.origin)) entry.origins.push(candidate.origin);
        return name;
      }
    }
    const name = uniqueId(base, (id) => this.#entries.has(id));
    const payload = this.#placeSchema(name, candidate.schema);
    const title = candidate.schema?.title;
    const description = candidate.schema?.description;
    const message: MessageObject = {
      name,
      ...(typeof title === "string" && title !== name ? { title } : {}),
      ...(typeof description === "string" ? { description } : {}),
      contentType: candidate.contentType,
      ...(payload === undefined ? {} : { payload: refTo("components", "schemas", payload) }),
      headers: refTo("components", "schemas", headersSchemaKey),
      ...(candidate.bindings === undefined ? {} : { bindings: candidate.bindings }),
    };
    this.#entries.set(name, {
      identity,
      message,
      origins: [candidate.origin],
      vendor: candidate.vendor,
      correlated: false,
    });
    return name;
  }

  /** Another contributor carries an existing message (a reply to a channel the app reads). */
  noteOrigin(name: string, origin: string): void {
    const origins = this.#entries.get(name)?.origins;
    if (origins !== undefined && !origins.includes(origin)) origins.push(origin);
  }

  /** The message takes part in a request and its reply, tied by the `correlation-id` header. */
  correlate(name: string): void {
    const entry = this.#entries.get(name);
    if (entry !== undefined) entry.correlated = true;
  }

  contentTypes(): ReadonlySet<string> {
    return new Set([...this.#entries.values()].map((e) => e.message.contentType));
  }

  messages(): Record<string, MessageObject> {
    const out: Record<string, MessageObject> = {};
    for (const [name, entry] of this.#entries) {
      out[name] = entry.correlated
        ? {
            ...entry.message,
            correlationId: {
              location: "$message.header#/correlation-id",
              description: "A reply carries the correlation-id of the message it answers.",
            },
          }
        : entry.message;
    }
    return out;
  }

  schemas(): Record<string, SchemaObject> {
    return this.#schemas;
  }

  /** Messages with no payload schema, bytes aside: the bytes are their own format. */
  gaps(): MessageGap[] {
    return [...this.#entries.entries()]
      .filter(
        ([, e]) => e.message.payload === undefined && e.message.contentType !== bytesContentType,
      )
      .map(([name, e]) => ({ name, origins: e.origins, vendor: e.vendor }));
  }

  #placeSchema(name: string, schema: SchemaObject | undefined): string | undefined {
    if (schema === undefined) return undefined;
    const root = uniqueId(name, (id) => id in this.#schemas);
    // Reserved first, so a definition hoisted under a similar name cannot take it.
    this.#schemas[root] = {};
    const placed = placePayloadSchema(schema, {
      root,
      hoist: (definition) => {
        const key = uniqueId(toId(`${root}.${definition}`), (id) => id in this.#schemas);
        this.#schemas[key] = {};
        return key;
      },
    });
    this.#schemas[root] = placed.root;
    Object.assign(this.#schemas, placed.definitions);
    return root;
  }
}
