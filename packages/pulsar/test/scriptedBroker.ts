// A scripted stand-in for a Pulsar broker on a loopback port, for what a real standalone broker
// cannot be made to do on demand: redirect lookups, go silent, demand authentication, negotiate a
// small max_message_size, speak TLS with a certificate made for the test.
import { createServer as createNetServer, type Server, type Socket } from "node:net";
import { createServer as createTlsServer } from "node:tls";
import { readBatch } from "../src/wire/batch.js";
import { CommandType, LookupType } from "../src/wire/commands/enums.js";
import type { BaseCommand } from "../src/wire/commands/shapes.js";
import { encodeCommandFrame, FrameReader, type PayloadSection } from "../src/wire/frame.js";

export interface ScriptedConnection {
  /** 0 for the first connection the server accepted, 1 for the next... */
  readonly index: number;
  readonly socket: Socket;
  /** Every command received, in order. */
  readonly received: BaseCommand[];
  /** The payload of every message its SENDs carried, in order, a batch's one by one (uncompressed). */
  readonly messages: Uint8Array[];
  /** True once the client closed this connection. */
  closed: boolean;
  reply(command: BaseCommand): void;
}

/** Answers one command; return false to fall back to the default answer. */
export type Script = (
  command: BaseCommand,
  connection: ScriptedConnection,
  payload: PayloadSection | undefined,
) => boolean | undefined;

export interface ScriptedBroker {
  readonly url: string;
  readonly port: number;
  readonly connections: ScriptedConnection[];
  close(): Promise<void>;
}

/** The messages a SEND's payload section carries: itself, or a batch's entries. */
function sent(section: PayloadSection | undefined): Uint8Array[] {
  if (section === undefined) throw new Error("a SEND without a payload");
  const count = section.metadata.numMessagesInBatch;
  if (count === undefined) return [section.payload];
  return readBatch(section.payload, count).map((entry) => entry.payload);
}

/**
 * Starts a scripted broker. Without a script answer, it behaves as a one-broker cluster that owns
 * every topic: handshake, no partitions, lookups answered Connect to itself, producers accepted,
 * sends confirmed in order, pings answered.
 */
export async function scriptedBroker(
  script: Script = () => false,
  options: { tls?: { key: string; cert: string }; maxMessageSize?: number } = {},
): Promise<ScriptedBroker> {
  const connections: ScriptedConnection[] = [];
  let url = "";
  let entry = 0n;
  const onSocket = (socket: Socket): void => {
    const reader = new FrameReader();
    const connection: ScriptedConnection = {
      index: connections.length,
      socket,
      received: [],
      messages: [],
      closed: false,
      reply: (command) => {
        if (!socket.destroyed) socket.write(encodeCommandFrame(command));
      },
    };
    connections.push(connection);
    socket.on("close", () => {
      connection.closed = true;
    });
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        connection.received.push(frame.command);
        if (frame.command.type === CommandType.SEND)
          connection.messages.push(...sent(frame.payload));
        if (script(frame.command, connection, frame.payload)) continue;
        answerByDefault(frame.command, connection);
      }
    });
  };
  const answerByDefault = (command: BaseCommand, connection: ScriptedConnection): void => {
    switch (command.type) {
      case CommandType.CONNECT:
        connection.reply({
          type: CommandType.CONNECTED,
          connected: {
            serverVersion: "scripted",
            protocolVersion: 20,
            ...(options.maxMessageSize === undefined
              ? {}
              : { maxMessageSize: options.maxMessageSize }),
          },
        });
        return;
      case CommandType.PING:
        connection.reply({ type: CommandType.PONG, pong: {} });
        return;
      case CommandType.PARTITIONED_METADATA:
        connection.reply({
          type: CommandType.PARTITIONED_METADATA_RESPONSE,
          partitionMetadataResponse: {
            requestId: command.partitionMetadata!.requestId,
            partitions: 0,
            response: 0,
          },
        });
        return;
      case CommandType.LOOKUP:
        connection.reply({
          type: CommandType.LOOKUP_RESPONSE,
          lookupTopicResponse: {
            requestId: command.lookupTopic!.requestId,
            response: LookupType.Connect,
            brokerServiceUrl: url,
            brokerServiceUrlTls: url,
            authoritative: true,
          },
        });
        return;
      case CommandType.PRODUCER:
        connection.reply({
          type: CommandType.PRODUCER_SUCCESS,
          producerSuccess: {
            requestId: command.producer!.requestId,
            producerName: "scripted-producer",
          },
        });
        return;
      case CommandType.SEND:
        connection.reply({
          type: CommandType.SEND_RECEIPT,
          sendReceipt: {
            producerId: command.send!.producerId,
            sequenceId: command.send!.sequenceId,
            messageId: { ledgerId: 1n, entryId: entry++ },
          },
        });
        return;
      case CommandType.CLOSE_PRODUCER:
        connection.reply({
          type: CommandType.SUCCESS,
          success: { requestId: command.closeProducer!.requestId },
        });
        return;
    }
  };
  const server: Server = options.tls
    ? createTlsServer(options.tls, onSocket)
    : createNetServer(onSocket);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  url = `${options.tls ? "pulsar+ssl" : "pulsar"}://127.0.0.1:${port}`;
  return {
    url,
    port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of connections) c.socket.destroy();
        server.close(() => resolve());
      }),
  };
}
