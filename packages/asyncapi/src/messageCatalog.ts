import type { BindingsObject, MessageObject, Reference, SchemaObject } from "./document.js";
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
  /** What the message was made of, for the same message in another media type. */
  readonly schema: SchemaObject | undefined;
  readonly bindings: BindingsObject | undefined;
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
    const identity = identityOf(candidate.contentType, candidate.schema, candidate.bindings);
    const known = this.#known(base, identity, candidate.origin);
    if (known !== undefined) return known;
    const name = uniqueId(base, (id) => this.#entries.has(id));
    this.#entries.set(name, {
      identity,
      message: messageObject(name, candidate, this.#placeSchema(name, candidate.schema)),
      schema: candidate.schema,
      bindings: candidate.bindings,
      origins: [candidate.origin],
      vendor: candidate.vendor,
      correlated: false,
    });
    return name;
  }

  /**
   * The message `name` in another media type (a subscriber's `codecs`): the same payload schema,
   * headers and bindings, named `<name>_<subtype>` (`Order_msgpack`), so that the name follows from
   * the media type and not from where it stands in the list.
   */
  inContentType(name: string, contentType: string, origin: string): string {
    const of = this.#entries.get(name);
    if (of === undefined) throw new Error(`no AsyncAPI message ${name} in the catalog`);
    const base = toId(`${name}_${contentType.slice(contentType.indexOf("/") + 1)}`);
    const identity = identityOf(contentType, of.schema, of.bindings);
    const known = this.#known(base, identity, origin);
    if (known !== undefined) return known;
    const chosen = uniqueId(base, (id) => this.#entries.has(id));
    const candidate = { schema: of.schema, bindings: of.bindings, contentType };
    this.#entries.set(chosen, {
      identity,
      message: messageObject(chosen, candidate, of.message.payload),
      schema: of.schema,
      bindings: of.bindings,
      origins: [origin],
      vendor: of.vendor,
      correlated: false,
    });
    return chosen;
  }

  /** The message already under `base` or one of its suffixed names with this identity, if any. */
  #known(base: string, identity: string, origin: string): string | undefined {
    for (let n = 1; ; n += 1) {
      const name = n === 1 ? base : `${base}_${n}`;
      const entry = this.#entries.get(name);
      if (entry === undefined) return undefined;
      if (entry.identity === identity) {
        if (!entry.origins.includes(origin)) entry.origins.push(origin);
        return name;
      }
    }
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

  /** Places `schema` in `components.schemas` under `name` (or a free name near it). */
  #placeSchema(name: string, schema: SchemaObject | undefined): Reference | undefined {
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
    return refTo("components", "schemas", root);
  }
}

/** A message named `name`, its title and description the schema's, its payload `payload`. */
function messageObject(
  name: string,
  of: Pick<MessageCandidate, "contentType" | "schema" | "bindings">,
  payload: Reference | undefined,
): MessageObject {
  const title = of.schema?.title;
  const description = of.schema?.description;
  return {
    name,
    ...(typeof title === "string" && title !== name ? { title } : {}),
    ...(typeof description === "string" ? { description } : {}),
    contentType: of.contentType,
    ...(payload === undefined ? {} : { payload }),
    headers: refTo("components", "schemas", headersSchemaKey),
    ...(of.bindings === undefined ? {} : { bindings: of.bindings }),
  };
}

/** Two contributions with one media type, schema and bindings are one message. */
function identityOf(
  contentType: string,
  schema: SchemaObject | undefined,
  bindings: BindingsObject | undefined,
): string {
  return JSON.stringify([contentType, schema ?? null, bindings ?? null]);
}
