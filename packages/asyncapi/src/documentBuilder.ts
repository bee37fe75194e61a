import type { Bindings, BrokerDescription, SubscriberDescription } from "@ruststream/core";
import { mediaType } from "@ruststream/core/broker";
import { channelBindings, messageBindings, sourceBindings } from "./bindings/bindings.js";
import type {
  AsyncApiDocument,
  Channel,
  Operation,
  OperationReply,
  Reference,
  RetryExtension,
  Server,
} from "./document.js";
import { handlingProse } from "./handlingProse.js";
import { refTo, toId, uniqueId } from "./ids.js";
import { MessageCatalog, type MessageGap } from "./messageCatalog.js";

/** One broker as the builder walks it: its description and the key of its server, if any. */
export interface BrokerInDocument {
  readonly broker: BrokerDescription;
  readonly server: string | undefined;
}

interface MutableChannel {
  address: string | null;
  title?: string;
  description?: string;
  readonly messages: Record<string, Reference>;
  readonly server: string | undefined;
  readonly kind: string;
  /** The bindings of the descriptor the first subscriber reading this channel reads it through. */
  source?: Bindings | undefined;
}

/** A message on a channel and its media type. */
interface Carried {
  readonly message: string;
  readonly contentType: string;
}

/** The messages a channel carries for one operation: one, or a subscriber's one per media type. */
interface Received {
  readonly channel: string;
  /** The codec's message first, then one per media type of the subscriber's `codecs`. */
  readonly messages: readonly Carried[];
}

/**
 * Builds the document the way RustStream writes it: a channel per source and per destination, a
 * `receive` operation per subscriber, its reply as the operation's `reply` (the reply channel gets
 * no `send` of its own: `reply` is what pairs the two), and a `send` operation per `ctx.out`
 * publisher, per dead letter and per retry topic the descriptor names.
 */
export class DocumentBuilder {
  readonly #channels = new Map<string, MutableChannel>();
  /** Channel id by broker index and address. */
  readonly #channelIds = new Map<string, string>();
  readonly #operations: Record<string, Operation> = {};
  readonly #catalog = new MessageCatalog();
  /** The message each subscriber reads, by broker index and address: what a reply there carries. */
  readonly #received = new Map<string, Received>();

  constructor(readonly brokers: readonly BrokerInDocument[]) {}

  build(
    info: { readonly name: string; readonly version: string },
    servers: Record<string, Server>,
  ) {
    // Every subscriber's message first, so a destination the app also reads carries its schema.
    const receives = this.brokers.flatMap((entry, index) =>
      entry.broker.subscribers.map((subscriber) => ({
        entry,
        index,
        subscriber,
        received: this.#receive(entry, index, subscriber),
      })),
    );
    for (const { entry, index, subscriber, received } of receives) {
      this.#operation(entry, index, subscriber, received);
    }
    const contentTypes = this.#catalog.contentTypes();
    const [only] = contentTypes;
    const document: AsyncApiDocument = {
      asyncapi: "3.1.0",
      info: { title: info.name, version: info.version },
      ...(contentTypes.size === 1 && only !== undefined ? { defaultContentType: only } : {}),
      ...(Object.keys(servers).length === 0 ? {} : { servers }),
      channels: this.#channelObjects(),
      operations: this.#operations,
      components: { schemas: this.#catalog.schemas(), messages: this.#catalog.messages() },
    };
    return { document, gaps: this.#catalog.gaps() as readonly MessageGap[] };
  }

  #channel(index: number, address: string | null, entry: BrokerInDocument, id?: string): string {
    const key = `${index}\u0000${address ?? `\u0000${id}`}`;
    const known = this.#channelIds.get(key);
    if (known !== undefined) return known;
    const chosen = uniqueId(toId(id ?? address ?? "reply"), (candidate) =>
      this.#channels.has(candidate),
    );
    this.#channelIds.set(key, chosen);
    this.#channels.set(chosen, {
      address,
      messages: {},
      server: entry.server,
      kind: entry.broker.kind,
    });
    return chosen;
  }

  #receive(entry: BrokerInDocument, index: number, subscriber: SubscriberDescription): Received {
    const address = subscriber.source.name;
    const channel = this.#channel(index, address, entry);
    const read = this.#channels.get(channel);
    if (read !== undefined) read.source ??= subscriber.source.bindings;
    const schema = subscriber.message.schema;
    const title = schema?.jsonSchema?.title;
    const origin = `subscriber ${subscriber.name}`;
    const message = this.#catalog.add({
      name: typeof title === "string" ? title : address,
      contentType: subscriber.message.contentType,
      schema: schema?.jsonSchema,
      vendor: schema?.vendor,
      bindings: messageBindings(entry.broker.kind),
      origin,
    });
    // A delivery may carry any media type of the subscriber's codecs: each is a message of its
    // own, since an AsyncAPI message has one contentType; the schema validates what each decodes.
    const messages: Carried[] = [
      { message, contentType: subscriber.message.contentType },
      ...(subscriber.message.otherContentTypes ?? []).map((contentType) => ({
        message: this.#catalog.inContentType(message, contentType, origin),
        contentType,
      })),
    ];
    for (const carried of messages) this.#link(channel, carried.message);
    const received = { channel, messages };
    this.#received.set(`${index}\u0000${address}`, received);
    return received;
  }

  /**
   * The message a publish to `address` carries: the one the app reads there in its media type,
   * else its own. Media types compare as the runtime's codec lookup compares them (case and
   * parameters aside), so what the reader decodes is what the document pairs.
   */
  #destination(
    entry: BrokerInDocument,
    index: number,
    address: string | null,
    contentType: string,
    origin: string,
    channelId?: string,
  ): Received {
    const channel = this.#channel(index, address, entry, channelId);
    const read = address === null ? undefined : this.#received.get(`${index}\u0000${address}`);
    const type = mediaType(contentType);
    let message = read?.messages.find((m) => mediaType(m.contentType) === type)?.message;
    if (message !== undefined) {
      this.#catalog.noteOrigin(message, origin);
    } else {
      message = this.#catalog.add({
        name: address ?? channel,
        contentType,
        bindings: messageBindings(entry.broker.kind),
        origin,
      });
    }
    this.#link(channel, message);
    return { channel, messages: [{ message, contentType }] };
  }

  #link(channel: string, message: string): void {
    const messages = this.#channels.get(channel)?.messages;
    if (messages !== undefined) messages[message] = refTo("components", "messages", message);
  }

  #operation(
    entry: BrokerInDocument,
    index: number,
    subscriber: SubscriberDescription,
    received: Received,
  ): void {
    const kind = entry.broker.kind;
    const tags = [{ name: kind }];
    const facts = sourceBindings(kind, subscriber.source.bindings);
    let reply: OperationReply | undefined;
    if (subscriber.reply !== undefined) {
      const target = subscriber.reply.name ?? null;
      const to = this.#destination(
        entry,
        index,
        target,
        subscriber.reply.contentType,
        `the reply of subscriber ${subscriber.name}`,
        target === null ? `${subscriber.name}.reply-to` : undefined,
      );
      if (target === null) {
        const channel = this.#channels.get(to.channel);
        if (channel !== undefined) {
          channel.title = `Replies of ${subscriber.name}`;
          channel.description = "Where each message asks for its reply, in its reply-to header.";
        }
      }
      // Whatever media type a request came in, its reply carries its correlation-id.
      for (const { message } of [...received.messages, ...to.messages]) {
        this.#catalog.correlate(message);
      }
      reply = {
        ...(target === null
          ? {
              address: {
                location: "$message.header#/reply-to",
                description: "The reply goes where the message's reply-to header says.",
              },
            }
          : {}),
        channel: refTo("channels", to.channel),
        messages: messageRefs(to),
      };
    }
    const retry: RetryExtension = {
      maxAttempts: subscriber.maxAttempts,
      backoff: subscriber.failure.backoff,
      ...(subscriber.deadLetter === undefined ? {} : { deadLetter: subscriber.deadLetter }),
      ...(facts.retryDestination === undefined ? {} : { retryDestination: facts.retryDestination }),
    };
    const id = uniqueId(`receive_${toId(subscriber.name)}`, (c) => c in this.#operations);
    this.#operations[id] = {
      action: "receive",
      channel: refTo("channels", received.channel),
      messages: messageRefs(received),
      summary: `Subscriber ${subscriber.name}`,
      description: handlingProse(subscriber),
      tags,
      ...(reply === undefined ? {} : { reply }),
      ...(facts.operation === undefined ? {} : { bindings: facts.operation }),
      "x-ruststream-retry": retry,
      ...(facts.unmapped === undefined ? {} : { "x-ruststream-bindings": facts.unmapped }),
    };

    const sends: { address: string; contentType: string; origin: string; summary: string }[] = [];
    for (const [key, out] of Object.entries(subscriber.publishes)) {
      if (out.name === undefined) continue;
      sends.push({
        address: out.name,
        contentType: out.contentType,
        origin: `ctx.out.${key} of subscriber ${subscriber.name}`,
        summary: `ctx.out.${key} of subscriber ${subscriber.name}`,
      });
    }
    // A dead-lettered copy and a retry copy are the message as it arrived, so they carry the
    // subscriber's own message.
    const copies: { address: string; summary: string }[] = [];
    if (subscriber.deadLetter !== undefined) {
      copies.push({
        address: subscriber.deadLetter,
        summary: `Dead letters of subscriber ${subscriber.name}`,
      });
    }
    if (facts.retryDestination !== undefined) {
      copies.push({
        address: facts.retryDestination,
        summary: `Retry copies of subscriber ${subscriber.name}`,
      });
    }
    for (const send of sends) {
      const to = this.#destination(entry, index, send.address, send.contentType, send.origin);
      this.#send(subscriber, to, send.summary, tags);
    }
    for (const copy of copies) {
      const channel = this.#channel(index, copy.address, entry);
      for (const { message } of received.messages) this.#link(channel, message);
      this.#send(subscriber, { ...received, channel }, copy.summary, tags);
    }
  }

  #send(
    subscriber: SubscriberDescription,
    to: Received,
    summary: string,
    tags: readonly { name: string }[],
  ): void {
    const id = uniqueId(
      `send_${toId(subscriber.name)}_${toId(to.channel)}`,
      (c) => c in this.#operations,
    );
    this.#operations[id] = {
      action: "send",
      channel: refTo("channels", to.channel),
      messages: messageRefs(to),
      summary,
      tags,
    };
  }

  #channelObjects(): Record<string, Channel> {
    const out: Record<string, Channel> = {};
    for (const [id, channel] of this.#channels) {
      const bindings =
        channel.address === null
          ? undefined
          : channelBindings(channel.kind, channel.address, channel.source);
      out[id] = {
        address: channel.address,
        ...(channel.title === undefined ? {} : { title: channel.title }),
        ...(channel.description === undefined ? {} : { description: channel.description }),
        messages: channel.messages,
        ...(channel.server === undefined ? {} : { servers: [refTo("servers", channel.server)] }),
        ...(bindings === undefined ? {} : { bindings }),
      };
    }
    return out;
  }
}

/** References to each message of `to` on its channel. */
function messageRefs(to: Received): Reference[] {
  return to.messages.map(({ message }) => refTo("channels", to.channel, "messages", message));
}
