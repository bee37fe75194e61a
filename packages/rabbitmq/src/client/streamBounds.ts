import { RustStreamError } from "@ruststream/core";
import type { ChannelModel, ConsumeMessage } from "amqplib";
import type { StreamBounds } from "../link.js";
import { refusalOf } from "./serverError.js";

/** How long the first message of a stream known to hold some may take before it is a failure. */
const firstWithinMs = 10_000;

/**
 * How far each stream is known written from what this connection's consumers were delivered (one
 * past the highest offset): the node's own count of a stream's messages is a statistic it refreshes
 * every few seconds, so a stream read here is known to reach at least this far.
 */
export class StreamEnds {
  readonly #next = new Map<string, bigint>();

  /** Notes a delivery of `queue` carrying `x-stream-offset` (every delivery of a stream does). */
  saw(queue: string, offset: unknown): void {
    if (typeof offset !== "number") return;
    const next = BigInt(offset) + 1n;
    const known = this.#next.get(queue);
    if (known === undefined || next > known) this.#next.set(queue, next);
  }

  next(queue: string): bigint | undefined {
    return this.#next.get(queue);
  }
}

/**
 * The offsets a stream queue holds, asked on a throwaway channel. AMQP has no question for them:
 * the first is the offset of the first message a consumer from `first` receives; the next is one
 * past what is known written, the larger of the first plus the node's count of the stream's
 * messages (refreshed every few seconds, so it may lag the last writes) and `seenNext`, what this
 * connection's consumers have been delivered. A stream with no message counted and none seen
 * answers 0 and 0.
 */
export async function streamBounds(
  model: ChannelModel,
  queue: string,
  seenNext: bigint | undefined,
): Promise<StreamBounds> {
  const channel = await model.createChannel();
  channel.on("error", () => {});
  let timer: NodeJS.Timeout | undefined;
  try {
    const { messageCount } = await channel.checkQueue(queue);
    if (messageCount === 0 && seenNext === undefined) return { first: 0n, next: 0n };
    // A stream consumer needs a prefetch: its credit.
    await channel.prefetch(1);
    const first = await new Promise<bigint>((resolve, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new RustStreamError(
              "broker-failure",
              `the stream "${queue}" holds messages and delivered none from its first within ${firstWithinMs} ms`,
            ),
          ),
        firstWithinMs,
      );
      channel
        .consume(
          queue,
          (message: ConsumeMessage | null) => {
            const offset = message?.properties.headers?.["x-stream-offset"];
            if (typeof offset === "number") resolve(BigInt(offset));
          },
          { arguments: { "x-stream-offset": "first" } },
        )
        .catch(reject);
    });
    const counted = first + BigInt(messageCount);
    return { first, next: seenNext !== undefined && seenNext > counted ? seenNext : counted };
  } catch (error) {
    if (error instanceof RustStreamError) throw error;
    const refusal = refusalOf(error);
    throw new RustStreamError(
      refusal.code === 404 ? "invalid-argument" : "broker-failure",
      `cannot read the offsets of stream "${queue}": ${refusal.text}`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
    await channel.close().catch(() => {});
  }
}
