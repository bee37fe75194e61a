import type { Channel, ChannelModel, Message } from "amqplib";
import type { PublishRequest } from "../link.js";
import { commitUnanswered, nothingCommitted, unroutableAtCommit } from "../transactionRefusal.js";
import { contentBuffer, publishOptions } from "./properties.js";
import { type AwaitingReturn, matchReturn } from "./returns.js";
import { refusalOf } from "./serverError.js";
import { txCommit, txSelect } from "./txMethods.js";

/** AMQP's basic.publish (class 60, method 40): the method a channel error names when a publish caused it. */
const basicPublish = { classId: 60, methodId: 40 } as const;

/**
 * The link's channel in transaction mode (tx.select; it can never be a confirm channel). A commit
 * sends the transaction's publishes and its tx.commit in one synchronous step, so nothing of it is
 * left half-sent on the channel; the link runs one commit at a time. RabbitMQ routes the messages
 * when it commits and returns, before its commit-ok, the `mandatory` ones it could route nowhere.
 */
export class TxChannel {
  readonly #channel: Channel;
  #awaiting: AwaitingReturn[] = [];
  #busy = false;
  #closed: Error | undefined;

  private constructor(channel: Channel) {
    this.#channel = channel;
    channel.on("return", (message: Message) => matchReturn(this.#awaiting, message));
    channel.on("error", (error: Error) => {
      this.#closed ??= error;
    });
    channel.on("close", () => {
      this.#closed ??= new Error("the channel closed");
    });
  }

  static async open(model: ChannelModel): Promise<TxChannel> {
    const channel = await model.createChannel();
    const opened = new TxChannel(channel);
    await txSelect(channel);
    return opened;
  }

  get closed(): boolean {
    return this.#closed !== undefined;
  }

  async commit(requests: readonly PublishRequest[]): Promise<void> {
    if (this.#busy) {
      // The link chains its commits; a second one here would mix two transactions in one.
      throw new Error(
        "TxChannel.commit called while a commit is open: the link runs one at a time",
      );
    }
    this.#busy = true;
    const awaiting = requests.map((request): AwaitingReturn => ({ request, returned: undefined }));
    this.#awaiting = awaiting;
    try {
      const committed = this.#send(requests);
      try {
        await committed;
      } catch (error) {
        throw this.#outcome(requests, error);
      }
    } finally {
      this.#busy = false;
      this.#awaiting = [];
    }
    const returned = awaiting.filter((a) => a.returned !== undefined);
    if (returned.length > 0) {
      throw unroutableAtCommit(
        requests,
        returned.map((a) => a.request),
        returned[0]?.returned ?? "NO_ROUTE",
      );
    }
  }

  async close(): Promise<void> {
    await this.#channel.close().catch(() => {});
  }

  /**
   * The publishes and the tx.commit, in one synchronous step. A channel already closed throws at
   * the first publish (nothing sent); a publish that throws after others went (amqplib refusing a
   * property, say) leaves them uncommitted on the channel, so the channel is closed, which discards
   * them, before the refusal is reported.
   */
  #send(requests: readonly PublishRequest[]): Promise<void> {
    try {
      for (const request of requests) {
        this.#channel.publish(
          request.exchange,
          request.routingKey,
          contentBuffer(request.content),
          publishOptions(request),
        );
      }
      return txCommit(this.#channel);
    } catch (error) {
      this.#closed ??= error as Error;
      void this.close();
      throw nothingCommitted(requests, refusalOf(error).text, error);
    }
  }

  /** What a commit that got no commit-ok means: nothing committed where that is certain. */
  #outcome(requests: readonly PublishRequest[], error: unknown) {
    const e = error as { classId?: unknown; methodId?: unknown };
    // The server closed the channel for one of the transaction's publishes: it handles a channel's
    // methods in order and ignores what follows a channel error, so the tx.commit behind that
    // publish was never run, and a closed channel's uncommitted work is discarded.
    if (e?.classId === basicPublish.classId && e?.methodId === basicPublish.methodId) {
      return nothingCommitted(requests, refusalOf(error).text, error);
    }
    return commitUnanswered(requests, refusalOf(this.#closed ?? error).text, error);
  }
}
