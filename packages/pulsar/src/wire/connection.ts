// One TCP (or TLS) connection to one broker, shared by every producer and consumer the client has
// on that broker. It does the handshake, answers and sends keep-alive pings, matches responses to
// requests by request id, routes producer and consumer traffic by their ids, and when the socket
// dies (or the peer stops answering) fails what is waiting and tells every registered producer and
// consumer, which reconnect on their own.
import { isIP, connect as netConnect, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { RustStreamError } from "@ruststream/core";
import { nodeTlsSettings, type ResolvedTls } from "@ruststream/core/broker";
import { CommandType, ResourceTypeValue } from "./commands/enums.js";
import type {
  BaseCommand,
  CommandActiveConsumerChange,
  CommandCloseConsumer,
  CommandCloseProducer,
  CommandMessage,
  CommandSendError,
  CommandSendReceipt,
  CommandTopicMigrated,
} from "./commands/shapes.js";
import { ProtocolFailure, serverFailure } from "./errors.js";
import {
  BROKER_FRAME_HEADROOM,
  DEFAULT_MAX_MESSAGE_SIZE,
  encodeCommandFrame,
  type Frame,
  FrameError,
  FrameReader,
  type PayloadSection,
} from "./frame.js";
import type { BrokerAddress } from "./serviceUrl.js";

/** The protocol version this client speaks: v20 (topic migration); the broker may answer lower. */
export const PROTOCOL_VERSION = 20;
/** Sent in CONNECT; brokers log it and show it in topic stats. */
export const CLIENT_VERSION = "ruststream-ts-pulsar/0.0.0";

/** Where a token comes from: a fixed string, or a function asked at every (re)authentication. */
export type TokenSource = string | (() => string | Promise<string>);

export interface ConnectionSettings {
  /** A token for the broker's token authentication (sent as auth method `token`). */
  readonly token?: TokenSource;
  /** TLS settings for `pulsar+ssl://` addresses, resolved (PEM as text). */
  readonly tls?: ResolvedTls;
  /** How long the TCP connect plus handshake may take (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** Ping interval; a peer silent for two intervals is taken for dead (default 30 s). */
  readonly keepAliveIntervalMs?: number;
  /** How long a request waits for its response (default 30 s). */
  readonly operationTimeoutMs?: number;
}

/** What a producer receives from its connection. */
export interface ProducerHandler {
  onSendReceipt(receipt: CommandSendReceipt): void;
  onSendError(error: CommandSendError): void;
  /** The broker closed the producer (unload, ownership change), or the topic moved. */
  onClosedByBroker(assignedBrokerUrl?: string): void;
  /** The connection is gone, with why. */
  onConnectionClosed(error: Error): void;
}

/** What a consumer receives from its connection. */
export interface ConsumerHandler {
  onMessage(message: CommandMessage, payload: PayloadSection): void;
  onActiveConsumerChange?(change: CommandActiveConsumerChange): void;
  onReachedEndOfTopic?(): void;
  onClosedByBroker(assignedBrokerUrl?: string): void;
  onConnectionClosed(error: Error): void;
}

interface Pending {
  readonly what: string;
  readonly resolve: (command: BaseCommand) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

const encoder = new TextEncoder();

async function tokenBytes(token: TokenSource): Promise<Uint8Array> {
  return encoder.encode(typeof token === "string" ? token : await token());
}

export class Connection {
  /** The broker's limit on one message (metadata + payload), from CONNECTED. */
  maxMessageSize = DEFAULT_MAX_MESSAGE_SIZE;
  /** The protocol version both sides speak. */
  protocolVersion = 0;
  serverVersion = "";

  readonly #reader = new FrameReader();
  readonly #pending = new Map<number, Pending>();
  readonly #producers = new Map<number, ProducerHandler>();
  readonly #consumers = new Map<number, ConsumerHandler>();
  readonly #closeListeners: ((error: Error) => void)[] = [];
  #nextRequestId = 0;
  #lastReceivedAt = Date.now();
  #keepAlive: NodeJS.Timeout | undefined;
  #closedWith: Error | undefined;
  #handshake: { resolve: () => void; reject: (error: Error) => void } | undefined;
  readonly #socket: Socket;
  readonly #settings: ConnectionSettings;

  private constructor(
    socket: Socket,
    /** The broker this connection reaches (what lookups call its logical address). */
    readonly logical: BrokerAddress,
    /** Where the socket goes: the broker itself, or a proxy in front of it. */
    readonly physical: BrokerAddress,
    settings: ConnectionSettings,
  ) {
    this.#socket = socket;
    this.#settings = settings;
  }

  /** Connects and completes the handshake; rejects with `broker-failure` (or `timeout`). */
  static async open(
    logical: BrokerAddress,
    physical: BrokerAddress,
    settings: ConnectionSettings = {},
  ): Promise<Connection> {
    const timeoutMs = settings.connectTimeoutMs ?? 10_000;
    const socket = physical.tls
      ? tlsConnect({
          host: physical.host,
          port: physical.port,
          ...(isIP(physical.host) ? {} : { servername: physical.host }),
          ...(settings.tls === undefined ? {} : nodeTlsSettings(settings.tls)),
        })
      : netConnect({ host: physical.host, port: physical.port });
    socket.setNoDelay(true);
    const connection = new Connection(socket, logical, physical, settings);
    const timer = setTimeout(() => {
      connection.#destroy(
        new RustStreamError(
          "timeout",
          `connecting to ${physical.url} took longer than ${timeoutMs} ms (TCP connect and Pulsar handshake)`,
        ),
      );
    }, timeoutMs);
    try {
      await connection.#start();
      return connection;
    } finally {
      clearTimeout(timer);
    }
  }

  #start(): Promise<void> {
    const done = new Promise<void>((resolve, reject) => {
      this.#handshake = { resolve, reject };
    });
    this.#socket.on("data", (chunk: Buffer) => this.#onData(chunk));
    this.#socket.on("error", (error) =>
      this.#destroy(
        new RustStreamError(
          "broker-failure",
          `connection to ${this.physical.url}: ${error.message}`,
          {
            cause: error,
          },
        ),
      ),
    );
    this.#socket.on("close", () =>
      this.#destroy(
        new RustStreamError(
          "broker-failure",
          `connection to ${this.physical.url} closed by the peer`,
        ),
      ),
    );
    this.#socket.once(this.physical.tls ? "secureConnect" : "connect", () => {
      void this.#sendConnect().catch((error: unknown) =>
        this.#destroy(
          new RustStreamError("broker-failure", `authentication token: ${String(error)}`, {
            cause: error,
          }),
        ),
      );
    });
    return done;
  }

  async #sendConnect(): Promise<void> {
    const connect: NonNullable<BaseCommand["connect"]> = {
      clientVersion: CLIENT_VERSION,
      protocolVersion: PROTOCOL_VERSION,
      featureFlags: { supportsAuthRefresh: true, supportsBrokerEntryMetadata: true },
    };
    if (this.#settings.token !== undefined) {
      connect.authMethodName = "token";
      connect.authData = await tokenBytes(this.#settings.token);
    }
    // A proxy forwards to the broker named here; a broker reached directly is not told.
    if (this.logical.url !== this.physical.url)
      connect.proxyToBrokerUrl = `${this.logical.host}:${this.logical.port}`;
    this.#write(encodeCommandFrame({ type: CommandType.CONNECT, connect }));
  }

  /** True once the socket is gone; a closed connection is never reused. */
  get closed(): boolean {
    return this.#closedWith !== undefined;
  }

  /** Called once when the connection closes, with the reason. */
  onClose(listener: (error: Error) => void): void {
    if (this.#closedWith) listener(this.#closedWith);
    else this.#closeListeners.push(listener);
  }

  /** A fresh request id, unique on this connection. */
  newRequestId(): number {
    return this.#nextRequestId++;
  }

  /**
   * Sends a command that carries `requestId` and resolves with the broker's answer to it (SUCCESS,
   * PRODUCER_SUCCESS, LOOKUP_RESPONSE...). An ERROR answer rejects with `broker-failure`.
   */
  request(requestId: number, command: BaseCommand, what: string): Promise<BaseCommand> {
    if (this.#closedWith) return Promise.reject(this.#closedWith);
    const timeoutMs = this.#settings.operationTimeoutMs ?? 30_000;
    return new Promise<BaseCommand>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(requestId);
        reject(
          new RustStreamError(
            "timeout",
            `${what}: no answer from ${this.logical.url} within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      this.#pending.set(requestId, { what, resolve, reject, timer });
      this.#write(encodeCommandFrame(command));
    });
  }

  /** Sends a command that gets no answer (FLOW, ACK, REDELIVER...). False when the connection is gone. */
  send(command: BaseCommand): boolean {
    if (this.#closedWith) return false;
    this.#write(encodeCommandFrame(command));
    return true;
  }

  /** Sends several commands that get no answer in one socket write. False when the connection is gone. */
  sendAll(commands: readonly BaseCommand[]): boolean {
    if (this.#closedWith) return false;
    const frames = commands.map(encodeCommandFrame);
    this.#write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
    return true;
  }

  /** Sends a frame already encoded (a producer's, kept for resending after a reconnect). */
  sendFrame(frame: Uint8Array): boolean {
    if (this.#closedWith) return false;
    this.#write(frame);
    return true;
  }

  registerProducer(producerId: number, handler: ProducerHandler): void {
    this.#producers.set(producerId, handler);
  }

  unregisterProducer(producerId: number): void {
    this.#producers.delete(producerId);
  }

  registerConsumer(consumerId: number, handler: ConsumerHandler): void {
    this.#consumers.set(consumerId, handler);
  }

  unregisterConsumer(consumerId: number): void {
    this.#consumers.delete(consumerId);
  }

  /** How many producers and consumers use this connection. */
  get users(): number {
    return this.#producers.size + this.#consumers.size;
  }

  /** Closes the connection; everything waiting on it fails with `closed` (or `error`). */
  close(error?: Error): void {
    this.#destroy(
      error ?? new RustStreamError("closed", `connection to ${this.physical.url} closed`),
    );
  }

  #write(frame: Uint8Array): void {
    this.#socket.write(frame);
  }

  #destroy(error: Error): void {
    if (this.#closedWith) return;
    this.#closedWith = error;
    clearInterval(this.#keepAlive);
    this.#socket.destroy();
    this.#handshake?.reject(error);
    this.#handshake = undefined;
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.#pending.clear();
    const producers = [...this.#producers.values()];
    const consumers = [...this.#consumers.values()];
    this.#producers.clear();
    this.#consumers.clear();
    for (const producer of producers) producer.onConnectionClosed(error);
    for (const consumer of consumers) consumer.onConnectionClosed(error);
    for (const listener of this.#closeListeners.splice(0)) listener(error);
  }

  #onData(chunk: Buffer): void {
    this.#lastReceivedAt = Date.now();
    let frames: Frame[];
    try {
      frames = this.#reader.push(chunk);
    } catch (error) {
      this.#refuseAnswer(error);
      this.#destroy(
        new RustStreamError(
          "broker-failure",
          `connection to ${this.physical.url}: unreadable frame (${String(error)})`,
          { cause: error },
        ),
      );
      return;
    }
    for (const frame of frames) {
      if (this.#closedWith) return;
      try {
        this.#dispatch(frame);
      } catch (error) {
        // A handler's bug must not leave the connection half-read: drop it and let users reconnect.
        this.#destroy(
          new RustStreamError(
            "broker-failure",
            `handling ${frame.command.type}: ${String(error)}`,
            {
              cause: error,
            },
          ),
        );
      }
    }
  }

  /**
   * A command over the limit that answers a request fails that request for good, before the
   * connection closes: asked again on the next connection, it would get the same answer, and the
   * client would loop through reconnects. (Only a MESSAGE over the limit is skipped: it is an
   * entry, which the consumer handles as undecodable.)
   */
  #refuseAnswer(error: unknown): void {
    if (!(error instanceof FrameError) || error.command === undefined) return;
    const requestId = error.command.error?.requestId ?? responseRequestId(error.command);
    const pending = requestId === undefined ? undefined : this.#take(requestId);
    pending?.reject(
      new RustStreamError(
        "broker-failure",
        `${pending.what}: the broker's answer is larger than this connection reads (${error.message}); not asked again, as the answer would be the same`,
        { cause: new ProtocolFailure(error.message, { cause: error }) },
      ),
    );
  }

  #dispatch(frame: Frame): void {
    const command = frame.command;
    switch (command.type) {
      case CommandType.CONNECTED:
        this.#onConnected(command);
        return;
      case CommandType.PING:
        this.send({ type: CommandType.PONG, pong: {} });
        return;
      case CommandType.PONG:
        return;
      case CommandType.AUTH_CHALLENGE:
        void this.#answerChallenge();
        return;
      case CommandType.MESSAGE: {
        const message = command.message!;
        if (!frame.payload) throw new Error("MESSAGE without payload");
        this.#consumers.get(message.consumerId)?.onMessage(message, frame.payload);
        return;
      }
      case CommandType.SEND_RECEIPT: {
        const receipt = command.sendReceipt!;
        this.#producers.get(receipt.producerId)?.onSendReceipt(receipt);
        return;
      }
      case CommandType.SEND_ERROR: {
        const error = command.sendError!;
        this.#producers.get(error.producerId)?.onSendError(error);
        return;
      }
      case CommandType.CLOSE_PRODUCER:
        this.#onCloseProducer(command.closeProducer!);
        return;
      case CommandType.CLOSE_CONSUMER:
        this.#onCloseConsumer(command.closeConsumer!);
        return;
      case CommandType.TOPIC_MIGRATED:
        this.#onTopicMigrated(command.topicMigrated!);
        return;
      case CommandType.ACTIVE_CONSUMER_CHANGE: {
        const change = command.activeConsumerChange!;
        this.#consumers.get(change.consumerId)?.onActiveConsumerChange?.(change);
        return;
      }
      case CommandType.REACHED_END_OF_TOPIC:
        this.#consumers.get(command.reachedEndOfTopic!.consumerId)?.onReachedEndOfTopic?.();
        return;
      case CommandType.ERROR: {
        const error = command.error!;
        if (this.#handshake) {
          // ERROR before CONNECTED: the handshake failed (authentication, version).
          this.#destroy(
            serverFailure(`handshake with ${this.physical.url}`, error.error, error.message),
          );
          return;
        }
        const pending = this.#take(error.requestId);
        pending?.reject(serverFailure(pending.what, error.error, error.message));
        return;
      }
      default: {
        const requestId = responseRequestId(command);
        if (requestId === undefined) return; // a command this client does not use
        if (
          command.type === CommandType.PRODUCER_SUCCESS &&
          command.producerSuccess!.producerReady === false
        )
          return; // WaitForExclusive: a second PRODUCER_SUCCESS follows when the producer is ready
        this.#take(requestId)?.resolve(command);
      }
    }
  }

  #take(requestId: number): Pending | undefined {
    const pending = this.#pending.get(requestId);
    if (!pending) return undefined;
    this.#pending.delete(requestId);
    clearTimeout(pending.timer);
    return pending;
  }

  #onConnected(command: BaseCommand): void {
    const connected = command.connected!;
    this.serverVersion = connected.serverVersion;
    this.protocolVersion = connected.protocolVersion ?? 0;
    if (connected.maxMessageSize !== undefined && connected.maxMessageSize > 0)
      this.maxMessageSize = connected.maxMessageSize;
    // Frames from the broker may carry broker entry metadata and command bytes beyond the limit.
    this.#reader.maxFrameSize = this.maxMessageSize + BROKER_FRAME_HEADROOM;
    const interval = this.#settings.keepAliveIntervalMs ?? 30_000;
    this.#lastReceivedAt = Date.now();
    this.#keepAlive = setInterval(() => this.#checkAlive(interval), interval);
    this.#keepAlive.unref();
    this.#handshake?.resolve();
    this.#handshake = undefined;
  }

  #checkAlive(interval: number): void {
    if (Date.now() - this.#lastReceivedAt >= 2 * interval) {
      this.#destroy(
        new RustStreamError(
          "broker-failure",
          `connection to ${this.physical.url}: no data for ${2 * interval} ms (ping unanswered); the peer is taken for dead`,
        ),
      );
      return;
    }
    this.send({ type: CommandType.PING, ping: {} });
  }

  async #answerChallenge(): Promise<void> {
    try {
      const authData =
        this.#settings.token === undefined
          ? new Uint8Array()
          : await tokenBytes(this.#settings.token);
      this.send({
        type: CommandType.AUTH_RESPONSE,
        authResponse: {
          clientVersion: CLIENT_VERSION,
          protocolVersion: PROTOCOL_VERSION,
          response: { authMethodName: "token", authData },
        },
      });
    } catch (error) {
      this.#destroy(
        new RustStreamError(
          "broker-failure",
          `refreshing the authentication token: ${String(error)}`,
          {
            cause: error,
          },
        ),
      );
    }
  }

  #onCloseProducer(close: CommandCloseProducer): void {
    const handler = this.#producers.get(close.producerId);
    this.#producers.delete(close.producerId);
    handler?.onClosedByBroker(
      this.physical.tls ? close.assignedBrokerServiceUrlTls : close.assignedBrokerServiceUrl,
    );
  }

  #onCloseConsumer(close: CommandCloseConsumer): void {
    const handler = this.#consumers.get(close.consumerId);
    this.#consumers.delete(close.consumerId);
    handler?.onClosedByBroker(
      this.physical.tls ? close.assignedBrokerServiceUrlTls : close.assignedBrokerServiceUrl,
    );
  }

  #onTopicMigrated(migrated: CommandTopicMigrated): void {
    const url = this.physical.tls ? migrated.brokerServiceUrlTls : migrated.brokerServiceUrl;
    if (migrated.resourceType === ResourceTypeValue.Producer) {
      const handler = this.#producers.get(migrated.resourceId);
      this.#producers.delete(migrated.resourceId);
      handler?.onClosedByBroker(url);
    } else {
      const handler = this.#consumers.get(migrated.resourceId);
      this.#consumers.delete(migrated.resourceId);
      handler?.onClosedByBroker(url);
    }
  }
}

/** The request id of a response command, if it is one. */
function responseRequestId(command: BaseCommand): number | undefined {
  return (
    command.success?.requestId ??
    command.producerSuccess?.requestId ??
    command.lookupTopicResponse?.requestId ??
    command.partitionMetadataResponse?.requestId ??
    command.getLastMessageIdResponse?.requestId ??
    command.consumerStatsResponse?.requestId ??
    command.ackResponse?.requestId
  );
}
