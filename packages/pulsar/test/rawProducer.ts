// A producer that writes an entry's metadata and payload byte for byte, as a buggy or hostile
// producer in another language would: what the wire client's own producer never sends (a batch
// whose count lies, a codec number nobody knows, a zlib bomb, metadata that is no MessageMetadata).
// It is the wire client's connection, registered as a producer and sending SEND frames the test
// built; the broker checks their checksum (which is right) and stores them as they are.
import { CommandType } from "../src/wire/commands/enums.js";
import type { CommandSendReceipt, MessageMetadata } from "../src/wire/commands/shapes.js";
import type { Connection } from "../src/wire/connection.js";
import { encodeMessageSection, encodePayloadFrame } from "../src/wire/frame.js";
import { MessageId, type PulsarClient } from "../src/wire/index.js";

/** What a raw entry's metadata leaves to the producer: its name, sequence id and publish time. */
export type RawMetadata = Omit<MessageMetadata, "producerName" | "sequenceId" | "publishTime">;

export class RawProducer {
  readonly #connection: Connection;
  readonly #producerId: number;
  readonly #producerName: string;
  readonly #receipts = new Map<bigint, (receipt: CommandSendReceipt) => void>();
  #sequenceId = 0n;

  private constructor(connection: Connection, producerId: number, producerName: string) {
    this.#connection = connection;
    this.#producerId = producerId;
    this.#producerName = producerName;
  }

  /** A producer on `topic`, over the client's connection to the broker that serves it. */
  static async create(client: PulsarClient, topic: string): Promise<RawProducer> {
    const { logical, physical } = await client.lookup(`persistent://public/default/${topic}`);
    const connection = await client.connection(logical, physical);
    const producerId = client.newProducerId();
    const requestId = connection.newRequestId();
    const answer = await connection.request(
      requestId,
      {
        type: CommandType.PRODUCER,
        producer: { topic: `persistent://public/default/${topic}`, producerId, requestId },
      },
      `raw producer on ${topic}`,
    );
    const producer = new RawProducer(connection, producerId, answer.producerSuccess!.producerName);
    connection.registerProducer(producerId, {
      onSendReceipt: (receipt) => producer.#receipts.get(receipt.sequenceId)?.(receipt),
      onSendError: (error) => {
        throw new Error(`the broker refused a raw entry: ${error.message}`);
      },
      onClosedByBroker: () => undefined,
      onConnectionClosed: () => undefined,
    });
    return producer;
  }

  /** Sends an entry of this metadata and payload; resolves to its id once the broker stored it. */
  send(metadata: RawMetadata, payload: Uint8Array): Promise<MessageId> {
    const sequenceId = this.#sequenceId;
    const full: MessageMetadata = {
      ...metadata,
      producerName: this.#producerName,
      sequenceId,
      publishTime: Date.now(),
    };
    return this.sendSection(encodeMessageSection(full, payload), metadata.numMessagesInBatch);
  }

  /**
   * Sends a message section as it is, `[metadataSize][metadata][payload]` (whatever its bytes say),
   * under a correct checksum; resolves to its id once the broker stored it.
   */
  sendSection(section: Uint8Array, numMessages = 1): Promise<MessageId> {
    const sequenceId = this.#sequenceId++;
    const stored = new Promise<MessageId>((resolve) => {
      this.#receipts.set(sequenceId, (receipt) => {
        this.#receipts.delete(sequenceId);
        resolve(MessageId.fromData(receipt.messageId!));
      });
    });
    this.#connection.sendFrame(
      encodePayloadFrame(
        {
          type: CommandType.SEND,
          send: { producerId: this.#producerId, sequenceId, numMessages: Math.max(1, numMessages) },
        },
        section,
      ),
    );
    return stored;
  }

  async close(): Promise<void> {
    const requestId = this.#connection.newRequestId();
    await this.#connection.request(
      requestId,
      {
        type: CommandType.CLOSE_PRODUCER,
        closeProducer: { producerId: this.#producerId, requestId },
      },
      "close the raw producer",
    );
    this.#connection.unregisterProducer(this.#producerId);
  }
}
