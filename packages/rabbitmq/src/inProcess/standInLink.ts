import type {
  ConsumeRequest,
  Link,
  LinkConsumer,
  LinkDelivery,
  PublishRequest,
  StreamBounds,
} from "../link.js";
import type { Topology } from "../topology/topology.js";
import { type StandInConsumer, type StandInQueue, stopConsumer } from "./standInQueue.js";
import { StandInStream } from "./standInStream.js";

/** What a link needs of the stand-in server, which implements it (no import back to it). */
export interface StandInServer {
  ensure(topology: Topology, declare: boolean): void;
  queue(name: string): StandInQueue | StandInStream;
  streamBounds(name: string): StreamBounds;
  queueCounts(names: readonly string[]): readonly number[];
  publish(request: PublishRequest): void;
  commit(requests: readonly PublishRequest[]): void;
  openReplyInbox(id: string, deliver: (reply: LinkDelivery) => void): string;
  closeReplyInbox(address: string): void;
}

/**
 * A connection to the in-process stand-in: the broker's Link, answered at once (a publish resolves
 * once the message is routed, as a confirm would; deliveries arrive each in its own task).
 */
export class StandInLink implements Link {
  readonly replyTo = "amq.rabbitmq.reply-to";
  readonly #server: StandInServer;
  readonly #id: string;
  readonly #consumers = new Set<LinkConsumer>();
  #replyAddress: string | undefined;
  #onReply: ((reply: LinkDelivery) => void) | undefined;

  constructor(server: StandInServer, id: string) {
    this.#server = server;
    this.#id = id;
  }

  async ensure(topology: Topology, declare: boolean): Promise<void> {
    this.#server.ensure(topology, declare);
  }

  async consume(request: ConsumeRequest): Promise<LinkConsumer> {
    const queue = this.#server.queue(request.queue);
    const consumer: StandInConsumer = {
      prefetch: request.prefetch,
      unacked: new Set(),
      deliver: request.onDelivery,
      cancelled: request.onCancelled,
      open: true,
    };
    if (queue instanceof StandInStream) {
      queue.addConsumer(consumer, request.arguments["x-stream-offset"]);
    } else {
      queue.addConsumer(consumer);
    }
    const handle: LinkConsumer = {
      cancel: async () => {
        this.#consumers.delete(handle);
        queue.removeConsumer(consumer);
      },
      stop: async () => {
        stopConsumer(consumer, () => void handle.cancel());
      },
    };
    this.#consumers.add(handle);
    return handle;
  }

  async streamBounds(queue: string): Promise<StreamBounds> {
    return this.#server.streamBounds(queue);
  }

  async queueCounts(queues: readonly string[]): Promise<readonly number[]> {
    return this.#server.queueCounts(queues);
  }

  async publish(request: PublishRequest): Promise<void> {
    this.#server.publish(request);
  }

  async commit(requests: readonly PublishRequest[]): Promise<void> {
    this.#server.commit(requests);
  }

  async publishRequest(request: PublishRequest): Promise<void> {
    this.#server.publish({
      ...request,
      properties: { ...request.properties, replyTo: this.#replyInbox() },
    });
  }

  onReply(listener: (reply: LinkDelivery) => void): void {
    this.#onReply = listener;
  }

  readonly publishNow = (request: PublishRequest): void => {
    this.#server.publish(request);
  };

  async close(): Promise<void> {
    await Promise.all([...this.#consumers].map((c) => c.cancel()));
    if (this.#replyAddress !== undefined) this.#server.closeReplyInbox(this.#replyAddress);
  }

  #replyInbox(): string {
    this.#replyAddress ??= this.#server.openReplyInbox(this.#id, (reply) => this.#onReply?.(reply));
    return this.#replyAddress;
  }
}
