import { ClientProxy, type ReadPacket, type WritePacket } from "@nestjs/microservices";
import {
  type AppPublishOptions,
  type ConnectionState,
  type RunningApp,
  RustStream,
  RustStreamError,
} from "@ruststream/core";
import { AppSlot } from "./appSlot.js";
import type { ClientRustStreamOptions } from "./clientOptions.js";
import { readErrorReply } from "./errorReply.js";
import { nestLogger } from "./nestLogger.js";
import { isEndReply } from "./replyStream.js";
import { RustStreamRecord } from "./rustStreamRecord.js";

const defaultTimeoutMs = 30_000;

/**
 * A Nest `ClientProxy` on a RustStream broker: `emit(pattern, data)` publishes `data` to the
 * pattern's topic (the Observable completes once the broker confirmed it), `send(pattern, data)`
 * requests through the broker's request/reply and emits the reply (or errors with the handler's
 * error, as Nest's transports send it). The pattern is the topic as
 * `RustStreamServer` reads it (an object pattern as Nest writes it, keys sorted); a handler's
 * Observable is streamed back, each value emitted as it comes, then completion; `packet.metadata`
 * (set by a dispatch hook) travels as headers. Data wrapped in a {@link RustStreamRecord} is
 * published with the record's partition key, headers and broker options.
 */
export class ClientRustStream extends ClientProxy<Record<never, never>, ConnectionState> {
  readonly #options: ClientRustStreamOptions;
  readonly #timeoutMs: number;
  readonly #app = new AppSlot(
    "the client is not connected: call connect() (or send or emit) first",
  );

  constructor(options: ClientRustStreamOptions) {
    super();
    if (typeof options !== "object" || options === null || options.broker === undefined) {
      throw new RustStreamError(
        "invalid-argument",
        "new ClientRustStream({ broker }) needs a broker, for example new RedisBroker({ url })",
      );
    }
    const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw new RustStreamError(
        "invalid-argument",
        `ClientRustStream timeoutMs: ${timeoutMs}; give a positive number of milliseconds`,
      );
    }
    this.#options = options;
    this.#timeoutMs = timeoutMs;
  }

  /** Connects the broker (once; `send` and `emit` call it themselves; a failed one is tried again). */
  connect(): Promise<RunningApp> {
    return this.#app.start(() => this.#start());
  }

  /** Shuts the broker down; waiting requests reject with code `closed`. */
  close(): Promise<void> {
    return this.#app.close();
  }

  /** The client's running RustStream app (its `publish`, `request`, `connection`). */
  unwrap<T>(): T {
    return this.#app.unwrap<T>();
  }

  protected publish(packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    let unsubscribed = false;
    const topic = this.normalizePattern(packet.pattern);
    // Each value a streaming handler sends before its last reply, as Nest's packets without
    // isDisposed: the Observable emits it and goes on.
    const onPartialReply = (response: unknown) => {
      if (!unsubscribed) callback({ response });
    };
    this.connect()
      .then((running) => {
        const { data, settings } = this.#outgoing(packet);
        return running.request(topic, data, {
          timeoutMs: this.#timeoutMs,
          onPartialReply,
          ...settings,
        });
      })
      .then(
        (response) => {
          if (!unsubscribed) callback(lastPacket(response));
        },
        (err: unknown) => {
          if (!unsubscribed) callback({ err, isDisposed: true });
        },
      );
    // Unsubscribing stops the replies from being emitted; the request itself stays published.
    return () => {
      unsubscribed = true;
    };
  }

  protected async dispatchEvent<T = unknown>(packet: ReadPacket): Promise<T> {
    const running = await this.connect();
    const { data, settings } = this.#outgoing(packet);
    await running.publish(this.normalizePattern(packet.pattern), data, settings);
    return undefined as T;
  }

  /** The data a packet publishes, and its publish's settings: a record's, the metadata, the codec. */
  #outgoing(packet: ReadPacket): { data: unknown; settings: AppPublishOptions } {
    const metadata = (packet as { metadata?: Readonly<Record<string, string>> }).metadata;
    const record = packet.data instanceof RustStreamRecord ? packet.data : undefined;
    const { partitionKey, headers, options } = record?.options ?? {};
    const merged = metadata === undefined ? headers : { ...metadata, ...headers };
    return {
      data: record === undefined ? packet.data : record.data,
      settings: {
        ...(merged === undefined ? {} : { headers: merged }),
        ...(partitionKey === undefined ? {} : { partitionKey }),
        ...(options === undefined ? {} : { options }),
        ...(this.#options.codec === undefined ? {} : { codec: this.#options.codec }),
      },
    };
  }

  async #start(): Promise<RunningApp> {
    const options = this.#options;
    const app = new RustStream({
      name: options.name ?? "nestjs-client",
      version: "0.0.0",
      logger: options.logger ?? nestLogger(ClientRustStream.name),
    });
    app.broker(options.broker);
    app.observe((event) => {
      if (event.type === "broker-connection") this._status$.next(event.state);
    });
    return app.start();
  }
}

/**
 * The packet of a request's last reply: a handler's failure errors the Observable with Nest's error
 * packet, the end of a streamed reply completes it, and any other reply is the value it emits last.
 */
function lastPacket(response: unknown): WritePacket {
  const failed = readErrorReply(response);
  if (failed !== undefined) return { ...failed, isDisposed: true };
  if (isEndReply(response)) return { isDisposed: true };
  return { response, isDisposed: true };
}
